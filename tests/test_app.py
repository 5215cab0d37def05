"""The Gradio app through its HTTP API (gradio_client), on the tiny model."""

import concurrent.futures as cf

import pytest
from gradio_client import Client, handle_file

from icr_app.tasks import builtin_task
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
    args = (query,) if method == "site" else (query, 4, 0)
    md, _fig, prompt = c.predict(*args, api_name=f"/answer_{method.replace('-', '_')}")
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


def _site_client(url: str, task: str) -> Client:
    c = _client(url, task)
    c.predict(20, 0, api_name="/build_site")
    return c


def test_site_build_answer_and_artefact(server, tmp_path):
    c = _site_client(server, "headline-topic")
    md, _fig, prompt = c.predict("Rain delays the cup final", api_name="/answer_site")
    assert prompt == "Input: Rain delays the cup final\nOutput:"
    assert md.split("\n")[1].strip("*") in {"sports", "business", "science", "politics"}
    fresh = _client(server, "headline-topic")
    md, _fig, _prompt = fresh.predict("Rain delays the cup final", api_name="/answer_site")
    assert "Build SITE" in md  # another session does not see this one's SITE task


def test_site_artefact_from_another_model_is_refused(server, tmp_path):
    from tiny import tiny_lm

    from icr_app.site import SiteConfig, build_site
    from icr_app.site_artefact import save_site

    other = tiny_lm(n_layers=2)
    site = build_site(other, builtin_task("sentiment"), config=SiteConfig(n_prompts=4, n_demos=2, steps=2))
    path = save_site(site, tmp_path / "other.safetensors")
    c = Client(server, verbose=False)
    with pytest.raises(Exception, match="tiny-llama@"):
        c.predict(handle_file(str(path)), api_name="/load_site")
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(Exception, match="corrupted or truncated"):
        c.predict(handle_file(str(path)), api_name="/load_site")


def test_concurrent_users_get_their_sequential_answers(server):
    """8 users × 5 queries at once, mixing tasks and methods (SITE hooks included): same answers as alone."""
    tasks = ["sentiment", "emotion", "headline-topic", "antonyms"]
    methods = ["zero-shot", "few-shot", "site", "site"]
    queries = ["the best day", "prices rise", "a storm hit", "I lost my keys", "hot"]
    jobs = [(tasks[u % 4], methods[(u + u // 4) % 4], q) for u in range(8) for q in queries]
    clients = {t: _site_client(server, t) for t in tasks}
    expected = {job: _answer(clients[job[0]], job[1], job[2]) for job in set(jobs)}
    assert len({m for _, m, _ in jobs}) == 3

    def user(u: int) -> list[tuple]:
        task, method = tasks[u % 4], methods[(u + u // 4) % 4]
        c = _site_client(server, task) if method == "site" else _client(server, task)
        return [((task, method, q), _answer(c, method, q)) for q in queries]

    with cf.ThreadPoolExecutor(8) as pool:
        results = [r for rs in pool.map(user, range(8)) for r in rs]
    assert len(results) == 40
    for job, got in results:
        assert got == expected[job], job


def test_batch_of_queries(server):
    c = _site_client(server, "sentiment")
    table = c.predict("\n".join(["great", "", "awful", "fine"]), 4, 0, api_name="/answer_batch")
    assert table["headers"][:4] == ["query", "zero-shot", "few-shot", "site"]
    assert [row[0] for row in table["data"]] == ["great", "awful", "fine"]
    assert {row[1] for row in table["data"]} <= {"positive", "negative"}
    single = [_answer(c, "site", q)[0].strip("*") for q in ("great", "awful", "fine")]
    assert [row[3] for row in table["data"]] == single


@pytest.mark.parametrize("kind", ["re-weighting", "compression", "confusion"])
def test_anchor_experiments_render(server, kind):
    c = _client(server, "sentiment")
    fig = c.predict(kind, 8, 2, 0, api_name="/anchor_experiment")
    assert fig["type"] == "plotly" and "data" in fig["plot"]


def test_mechanism_views_render(server):
    c = _client(server, "sentiment")
    curves, arcs, _slider = c.predict(2, 2, 0, api_name="/flow")
    assert "S_wp" in curves["plot"] and arcs["type"] == "plotly"
    assert c.predict(1, 2, 0, api_name="/isolation")["type"] == "plotly"
    figs = c.predict(1, 2, 0, api_name="/rank1")
    assert len(figs) == 4 and all(f["type"] == "plotly" for f in figs)
    with pytest.raises(Exception, match="need a classification task"):
        _client(server, "antonyms").predict("confusion", 8, 2, 0, api_name="/anchor_experiment")
