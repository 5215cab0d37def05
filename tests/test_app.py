"""The Gradio app through its HTTP API (gradio_client), on the tiny model."""

import concurrent.futures as cf

import pytest
from gradio_client import Client, handle_file

from icr_app.ui import launch


@pytest.fixture(scope="module")
def server(lm):
    demo = launch(lm, prevent_thread_lock=True, server_name="127.0.0.1", server_port=None, quiet=True)
    yield demo.local_url
    demo.close()


def _client(url: str, task: str) -> Client:
    c = Client(url, verbose=False)
    c.predict(task, api_name="/load_builtin")
    return c


def _answer(c: Client, method: str, query: str) -> tuple[str, str]:
    md, _fig, prompt = c.predict(query, 4, 0, api_name=f"/answer_{method.replace('-', '_')}")
    return md.split("\n")[1], prompt


def test_answers_follow_the_session_task(server):
    senti, emo = _client(server, "sentiment"), _client(server, "emotion")
    pred, prompt = _answer(senti, "zero-shot", "I loved it")
    assert prompt == "Input: I loved it\nOutput:"
    assert pred.strip("*") in {"positive", "negative"}
    pred, prompt = _answer(emo, "few-shot", "I loved it")
    assert pred.strip("*") in {"joy", "anger", "fear", "sadness"}
    assert prompt.count("Output:") == 5


def test_bad_upload_is_a_clear_error(server, tmp_path):
    bad = tmp_path / "one.csv"
    bad.write_text("input,output\na,x\nb,x\nc,x\nd,x\ne,x\nf,x\ng,x\nh,x\n")
    c = Client(server, verbose=False)
    with pytest.raises(Exception, match="every example has the label 'x'"):
        c.predict(handle_file(str(bad)), api_name="/load_upload")


def test_empty_query_is_refused(server):
    c = _client(server, "sentiment")
    with pytest.raises(Exception, match="type a query first"):
        c.predict("  ", 4, 0, api_name="/answer_zero_shot")


def test_concurrent_users_get_their_sequential_answers(server):
    tasks = ["sentiment", "emotion", "headline-topic", "antonyms"]
    methods = ["zero-shot", "few-shot"]
    queries = ["the best day", "prices rise", "a storm hit", "I lost my keys", "hot"]
    jobs = [(tasks[u % 4], methods[u % 2], q) for u in range(8) for q in queries]
    clients = {t: _client(server, t) for t in tasks}
    expected = {job: _answer(clients[job[0]], job[1], job[2]) for job in set(jobs)}

    def user(u: int) -> list[tuple]:
        c = _client(server, tasks[u % 4])
        return [((tasks[u % 4], methods[u % 2], q), _answer(c, methods[u % 2], q)) for q in queries]

    with cf.ThreadPoolExecutor(8) as pool:
        results = [r for rs in pool.map(user, range(8)) for r in rs]
    assert len(results) == 40
    for job, got in results:
        assert got == expected[job], job
