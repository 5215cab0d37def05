"""The Gradio app through its HTTP API (gradio_client), on the tiny model with a routing (non-zero) ICR router."""

import concurrent.futures as cf
import dataclasses
import json

import pytest
from gradio_client import Client, handle_file
from helpers import hash_encoder, routing_router
from tiny import build_state

from icr_app.app import launch
from icr_app.core.tasks import builtin_task
from icr_app.methods import DEFAULT_PANELS, REGISTRY, build_method
from icr_app.methods.icr import method as icr_method
from icr_app.methods.icr import router as router_module

SHOWN = list(DEFAULT_PANELS)
ROUTER_KEY = ("icr-router", "")  # where the pretrained router is kept on the model (`icr_method.router_state`)


@pytest.fixture(scope="module")
def router(lm):
    return routing_router(lm)


@pytest.fixture(scope="module")
def server(lm, router):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(icr_method, "load_pretrained", lambda _lm: router)
        mp.setattr(router_module, "minilm_encoder", lambda device: hash_encoder)  # the one the router was made with
        lm._memo.pop(ROUTER_KEY, None)  # the routing router, not one an earlier test kept on the model
        demo = launch(lm, prevent_thread_lock=True, server_name="127.0.0.1", server_port=None, quiet=True)
        yield demo.local_url
        demo.close()
        lm._memo.pop(ROUTER_KEY, None)


def _plot(fig: dict) -> dict:
    """A gr.Plot value as the client gets it: the plotly figure's JSON."""
    assert fig["type"] == "plotly"
    return json.loads(fig["plot"])


def _client(url: str, task: str) -> Client:
    c = Client(url, verbose=False)
    c.predict(task, api_name="/load_builtin")
    return c


def _answer(c: Client, method: str, query: str) -> tuple[str, str]:
    md, _fig, prompt = c.predict(query, 4, 0, SHOWN, api_name=f"/answer_{method.replace('-', '_')}")
    return md.split("\n")[1], prompt


def test_answers_follow_the_session_task(server):
    senti, emo = _client(server, "sentiment"), _client(server, "emotion")
    pred, prompt = _answer(senti, "zero-shot", "I loved it")
    assert prompt == "Input: I loved it\nOutput:"
    assert pred.strip("*") in {"positive", "negative"}
    pred, prompt = _answer(emo, "few-shot", "I loved it")
    assert pred.strip("*") in {"joy", "anger", "fear", "sadness"}
    assert prompt.count("Output:") == 5


def test_icr_panel_routes_and_its_tab_shows_the_maps_and_the_file(server, lm, router):
    """The ICR panel answers with the routed model: its label probabilities are the router's, not zero-shot's. Its
    tab (the generic one, from ICR's view) draws α(x) and γ(x) of the visitor's query, sums the router up and
    offers the built method's file, which answers as the page did."""
    import torch

    from icr_app import load
    from icr_app.methods.base import Answering
    from icr_app.methods.icr.method import ICRMethod
    from icr_app.methods.zero_shot import ZeroShotMethod

    c = _client(server, "sentiment")
    md, fig, prompt = c.predict("a dull and noisy film", 4, 0, SHOWN, api_name="/answer_icr")
    assert prompt == "Input: a dull and noisy film\nOutput:"
    shown = dict(zip(_plot(fig)["data"][0]["y"], _plot(fig)["data"][0]["x"]))  # label -> probability
    answering = Answering.of(lm, builtin_task("sentiment"))
    method = ICRMethod.of(lm, router, answering)
    routed = method.predict(["a dull and noisy film"])[0].label_probs
    plain = ZeroShotMethod(lm, answering).predict(["a dull and noisy film"])[0].label_probs
    assert shown == pytest.approx(routed, abs=1e-6) and routed != pytest.approx(plain, abs=5e-3)
    alpha, gamma = c.predict("a dull and noisy film", api_name="/icr_maps")
    want_alpha, want_gamma = method.router.route(["a dull and noisy film"])
    assert torch.tensor(_plot(alpha)["data"][0]["z"]) == pytest.approx(want_alpha[0], abs=1e-6)
    z = _plot(gamma)["data"][0]["z"]  # every layer, the routed ones filled
    assert torch.tensor([z[layer] for layer in router.meta.layers]) == pytest.approx(want_gamma[0], abs=1e-6)
    info, download = c.predict(api_name="/show_icr")
    assert "ICR's router, answering **sentiment**" in info
    again = load(download, lm)
    assert again.state.meta.task == "sentiment"
    assert again.predict(["a dull and noisy film"])[0].label_probs == pytest.approx(routed, abs=1e-6)


def test_bad_upload_is_a_clear_error(server, tmp_path):
    bad = tmp_path / "one.csv"
    bad.write_text("input,output\na,x\nb,x\nc,x\nd,x\ne,x\nf,x\ng,x\nh,x\n")
    c = Client(server, verbose=False)
    with pytest.raises(Exception, match="every example has the label 'x'"):
        c.predict(handle_file(str(bad)), api_name="/load_upload")


def test_empty_query_is_refused(server):
    c = _client(server, "sentiment")
    with pytest.raises(Exception, match="type a query first"):
        c.predict("  ", 4, 0, SHOWN, api_name="/answer_zero_shot")


def test_a_panel_tells_a_build_time_only_for_a_method_that_is_built(server):
    c = _client(server, "sentiment")
    md, _fig, _prompt = c.predict("I loved it", 4, 0, SHOWN, api_name="/answer_zero_shot")
    assert " ms · prompt " in md and "built in" not in md  # zero-shot is "built" in microseconds


def _site_client(url: str, task: str) -> Client:
    c = _client(url, task)
    c.predict(20, 0, api_name="/build_site")
    return c


def test_site_build_answer_and_artefact(server, lm, tmp_path):
    """Build SITE in the app, answer with it, download its file and load it back into another session: the
    loaded task answers exactly as the built one; a session that built nothing has no SITE."""
    from icr_app.methods.site.artefact import load_site

    c = _client(server, "headline-topic")
    head_map, info, download = c.predict(20, 0, api_name="/build_site")
    assert "SITE for **headline-topic**" in info and len(_plot(head_map)["data"][0]["z"]) == lm.n_layers
    md, _fig, prompt = c.predict("Rain delays the cup final", 4, 0, SHOWN, api_name="/answer_site")
    assert prompt == "Input: Rain delays the cup final\nOutput:"
    assert "built in" in md
    built_answer = md.split("\n")[1]
    assert built_answer.strip("*") in {"sports", "business", "science", "politics"}
    site = load_site(download, lm)  # the downloaded file is a valid SITE task for this model
    assert site.meta.task == "headline-topic"
    fresh = _client(server, "headline-topic")
    md, _fig, _prompt = fresh.predict("Rain delays the cup final", 4, 0, SHOWN, api_name="/answer_site")
    assert "not built" in md  # another session does not see this one's SITE task
    fresh.predict(handle_file(download), api_name="/load_site")
    md, _fig, _prompt = fresh.predict("Rain delays the cup final", 4, 0, SHOWN, api_name="/answer_site")
    assert md.split("\n")[1] == built_answer


def test_site_artefact_from_another_model_is_refused(server, tmp_path):
    from tiny import tiny_lm

    from icr_app.methods.site.artefact import save_site
    from icr_app.methods.site.method import SiteConfig

    other = tiny_lm(n_layers=2)
    site = build_state(other, builtin_task("sentiment"), "site", SiteConfig(n_prompts=4, n_demos=2, steps=2))
    path = save_site(site, tmp_path / "other.safetensors")
    c = Client(server, verbose=False)
    with pytest.raises(Exception, match="tiny-llama@"):
        c.predict(handle_file(str(path)), api_name="/load_site")
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(Exception, match="corrupted or truncated"):
        c.predict(handle_file(str(path)), api_name="/load_site")


@pytest.mark.slow
def test_concurrent_users_get_their_sequential_answers(server):
    """8 users × 5 queries at once, mixing tasks and methods (SITE hooks and ICR's routed attention included):
    every answer is the one that user gets alone."""
    tasks = ["sentiment", "emotion", "headline-topic", "antonyms"]
    methods = ["zero-shot", "few-shot", "site", "icr"]
    queries = ["the best day", "prices rise", "a storm hit", "I lost my keys", "hot"]
    jobs = [(tasks[u % 4], methods[(u + u // 4) % 4], q) for u in range(8) for q in queries]
    clients = {t: _site_client(server, t) for t in tasks}
    expected = {job: _answer(clients[job[0]], job[1], job[2]) for job in set(jobs)}
    assert {m for _, m, _ in jobs} == set(methods)

    def user(u: int) -> list[tuple]:
        task, method = tasks[u % 4], methods[(u + u // 4) % 4]
        c = _site_client(server, task) if method == "site" else _client(server, task)
        return [((task, method, q), _answer(c, method, q)) for q in queries]

    with cf.ThreadPoolExecutor(8) as pool:
        results = [r for rs in pool.map(user, range(8)) for r in rs]
    assert len(results) == 40
    for job, got in results:
        assert got == expected[job], job


def test_a_method_that_cannot_answer_says_why_in_its_panel(server, monkeypatch):
    """A method whose build fails says why in its own panel; the other panels still answer."""
    def refuse(ctx, config):
        raise ValueError("no router can serve this task")

    monkeypatch.setitem(REGISTRY, "icr", dataclasses.replace(REGISTRY["icr"], build=refuse))
    c = _client(server, "sentiment")
    md, _fig, _prompt = c.predict("fine", 4, 0, SHOWN, api_name="/answer_icr")
    assert "cannot answer: no router can serve this task" in md
    pred, _ = _answer(c, "zero-shot", "fine")
    assert pred.strip("*") in {"positive", "negative"}


def test_batch_of_queries(server):
    c = _site_client(server, "sentiment")
    table = c.predict("\n".join(["great", "", "awful", "fine"]), 4, 0, SHOWN, api_name="/answer_batch")
    assert table["headers"] == ["model", "query", "zero-shot", "few-shot", "site", "icr"]
    assert {row[0] for row in table["data"]} == {"tiny-llama"}  # the model that made the answers
    assert [row[1] for row in table["data"]] == ["great", "awful", "fine"]
    assert {row[2] for row in table["data"]} <= {"positive", "negative"}
    single = [_answer(c, "site", q)[0].strip("*") for q in ("great", "awful", "fine")]
    assert [row[4] for row in table["data"]] == single


ANCHOR_SETTINGS = (1, "all heads", 0.1)  # layer, heads, link threshold of the flow graph


def test_anchor_experiments_render(server, lm):
    """Each experiment's figure carries its numbers: re-weighting's before/after accuracies, compression's three
    variants (the full cache agrees with full few-shot), confusion's label-by-label matrices."""
    c = _client(server, "sentiment")

    def experiment(kind: str) -> dict:
        return _plot(c.predict(8, 2, 0, *ANCHOR_SETTINGS, kind, api_name="/anchor_experiment")[3])

    before, after = (bar["y"][0] for bar in experiment("re-weighting")["data"])
    assert 0 <= before <= 1 and 0 <= after <= 1
    fig = experiment("compression")
    names = fig["data"][0]["x"]
    assert names == ["full few-shot", "full cache", "anchors cache"]
    loyalty = dict(zip(names, fig["data"][1]["y"]))
    assert loyalty["full few-shot"] == 1.0 and loyalty["full cache"] == 1.0
    fig = experiment("confusion")
    predicted, confusion = fig["data"][0]["z"], fig["data"][1]["z"]
    assert len(predicted) == len(confusion) == 2 and sum(map(sum, confusion)) == 8
    assert all(predicted[i][i] == pytest.approx(1.0) for i in range(2))


def test_mechanism_views_render(server, lm):
    """Flow curves: three flows per layer that sum to 1; the flow graph writes the prompt out and draws the label
    words and the target; isolation has its five conditions; rank-1's identity error sits far below the gap."""
    c = _client(server, "sentiment")
    curves, arcs, _iso, _exp, _layer, _head = c.predict(2, 2, 0, *ANCHOR_SETTINGS, "re-weighting", api_name="/flow")
    flows = _plot(curves)["data"]
    assert [f["name"].split("(")[-1].rstrip(")") for f in flows] == ["S_wp", "S_pq", "S_ww"]
    for layer in range(lm.n_layers):
        assert sum(f["y"][layer] for f in flows) == pytest.approx(1.0)
    traces = _plot(arcs)["data"]
    words = {t.get("name"): t for t in traces if t.get("mode") == "text"}
    assert {"label word", "target", "text"} <= set(words) and any(t.get("mode") == "lines" for t in traces)
    joined = "".join(words["label word"]["text"])  # the demonstrations' labels, written out as tokens
    assert joined.count("positive") + joined.count("negative") == 2  # shots=2: two demonstrations
    iso = _plot(c.predict(1, 2, 0, *ANCHOR_SETTINGS, "re-weighting", api_name="/isolation")[2])
    assert len(iso["data"][0]["x"]) == 5 and iso["data"][0]["y"][0] == 1.0  # unmodified model: loyal to itself
    err, _sv, _norms, _transfer, no_update = c.predict(1, 2, 0, api_name="/rank1")
    patched, unpatched = (t["y"] for t in _plot(err)["data"][:2])
    assert all(p < 1e-4 < u for p, u in zip(patched, unpatched))
    assert no_update == ""  # a Llama's context moves every layer's MLP input
    with pytest.raises(Exception, match="need a classification task"):
        _client(server, "antonyms").predict(8, 2, 0, *ANCHOR_SETTINGS, "confusion", api_name="/anchor_experiment")


def test_picking_a_task_answers_its_example_query_in_one_call(server):
    """The picker loads the task and answers in the same call; an untouched query becomes the task's example, a
    typed one is kept."""
    from icr_app.prebuilt import example_query

    c = Client(server, verbose=False)
    out = c.predict("emotion", api_name="/load_builtin")
    query, zero_md, few_md = out[2], out[3], out[6]  # after the table and the description (states are not sent)
    assert query == example_query("emotion") != example_query("sentiment")
    for md in (zero_md, few_md):
        assert "ms · prompt" in md and md.split("\n")[1].strip("*") in builtin_task("emotion").labels
    kept = c.predict("spam", "my own words", api_name="/load_builtin")
    assert kept[2] == "my own words" and "ms · prompt" in kept[3]
    assert c.predict("spam", "  ", api_name="/load_builtin")[2] == example_query("spam")  # an empty box: the example


def test_an_answer_that_needs_no_build_is_computed_once_per_model(lm, monkeypatch):
    """The tour and the panels ask the same few-shot answer: computed once (the same as computing it afresh), again
    for another seed or another model."""
    from tiny import tiny_lm

    from icr_app.app.context import AppContext
    from icr_app.app.page import predict_one
    from icr_app.methods.base import Answering
    from icr_app.methods.few_shot import FewShotMethod

    calls = []
    real = FewShotMethod.predict
    monkeypatch.setattr(FewShotMethod, "predict", lambda self, queries: calls.append(queries) or real(self, queries))
    ctx, task = AppContext(lm), builtin_task("sentiment")
    first = predict_one(ctx, "few-shot", task, {}, "I loved it", 4, 0)
    again = predict_one(ctx, "few-shot", task, {}, "I loved it", 4, 0)
    assert again is first and len(calls) == 1 and not first.shipped
    assert real(FewShotMethod(lm, Answering.of(lm, task), task, 4, 0), ["I loved it"])[0] == first.prediction
    predict_one(ctx, "few-shot", task, {}, "I loved it", 4, 1)
    predict_one(AppContext(tiny_lm(n_layers=2)), "few-shot", task, {}, "I loved it", 4, 0)
    assert len(calls) == 3  # the first, another seed, another model


def test_the_memo_computes_once_for_callers_at_once_and_keeps_no_error(lm):
    import threading

    from icr_app.app.context import AppContext

    ctx, started, go, runs, got = AppContext(lm), threading.Event(), threading.Event(), [], []

    def slow() -> int:
        runs.append(1)
        started.set()
        go.wait(10)
        return 42

    first = threading.Thread(target=lambda: got.append(ctx.memo(("k",), slow)))
    first.start()
    started.wait(10)
    second = threading.Thread(target=lambda: got.append(ctx.memo(("k",), slow)))
    second.start()
    go.set()
    first.join(10), second.join(10)
    assert got == [42, 42] and runs == [1]

    def broken() -> int:
        runs.append(2)
        raise RuntimeError("out of memory")

    for _ in range(2):
        with pytest.raises(RuntimeError, match="out of memory"):
            ctx.memo(("bad",), broken)
    assert runs == [1, 2, 2]


def test_a_builtin_tasks_one_click_answers_are_shipped_and_used_only_where_exact(lm, router, tmp_path, monkeypatch):
    """`prebuild` ships every method's answer to a built-in task's one-click query; the app reads it (the same as
    computing it) instead of computing, and computes whenever anything differs: the query, the seed, the task's
    examples, a SITE the visitor built, the model."""
    from dataclasses import replace

    from tiny import tiny_lm

    from icr_app import prebuilt
    from icr_app.app.context import AppContext
    from icr_app.app.page import predict_one
    from icr_app.methods.base import Method
    from icr_app.methods.site.method import SiteConfig

    monkeypatch.setattr(icr_method, "load_pretrained", lambda _lm: router)
    monkeypatch.setattr(router_module, "minilm_encoder", lambda device: hash_encoder)
    lm._memo.pop(ROUTER_KEY, None)
    small = SiteConfig(n_prompts=4, n_demos=3, steps=4, batch_size=8, eval_every=2, patience=2, max_examples=24)
    prebuilt.prebuild(lm, ["sentiment"], tmp_path, configs={"site": small}, methods=["site"], views=False)
    monkeypatch.setattr(prebuilt, "PREBUILT", tmp_path)
    task, query, ctx = builtin_task("sentiment"), prebuilt.example_query("sentiment"), AppContext(lm)
    built = prebuilt.load_methods(lm, "sentiment")
    calls = []
    real = Method.predict
    monkeypatch.setattr(Method, "predict", lambda self, queries: calls.append(self.name) or real(self, queries))
    lm._memo.pop(ROUTER_KEY, None)
    shipped = {name: predict_one(ctx, name, task, built, query, 10, 0) for name in SHOWN}
    assert calls == [] and ROUTER_KEY not in lm._memo  # nothing computed, not even the ICR router loaded
    for name, answer in shipped.items():
        fresh = prebuilt.timed_answer(built.get(name) or prebuilt.instant_method(lm, task, name), query)
        assert answer.shipped and not fresh.shipped, name
        assert answer.prediction.prediction == fresh.prediction.prediction, name
        assert answer.prediction.label_probs == pytest.approx(fresh.prediction.label_probs, abs=1e-5), name
        assert answer.stored_parameters == fresh.stored_parameters, name

    def computed(name: str, *args, task=task, built=built, lm=lm) -> bool:
        calls.clear()
        answer = predict_one(AppContext(lm), name, task, built, *args)
        return not answer.shipped and len(calls) == 1

    edited = replace(task, examples=task.examples[:-1])
    visitors_site = build_method(lm, task, "site", small)
    assert computed("zero-shot", "another query", 10, 0)
    assert computed("few-shot", query, 10, 1)
    assert computed("zero-shot", query, 10, 0, task=edited)
    assert computed("site", query, 10, 0, built={"site": visitors_site})
    assert computed("zero-shot", query, 10, 0, lm=tiny_lm(n_layers=2))
    lm._memo.pop(ROUTER_KEY, None)


def test_gemma_ships_methods_views_and_answers_for_every_builtin_task():
    """What `icl-lab prebuild --model gemma3-270m` made, and its shipped ICR router, read without loading the
    model: every file is made for one and the same Gemma-3-270M, every method that learns from examples ships, each
    task's answers to its one-click query are that model's for every method (ICR's, ELICIT's and ATV's included),
    and its views are there."""
    from icr_app import prebuilt
    from icr_app.core.artefacts import artefact_fingerprint, artefact_kind
    from icr_app.core.prompts import SHOTS
    from icr_app.core.tasks import builtin_names
    from icr_app.methods.atv.generator import FILE as GENERATOR_FILE
    from icr_app.methods.atv.generator import SHIPPED as GENERATORS
    from icr_app.methods.icr.router import PRETRAINED

    root = prebuilt.PREBUILT / "gemma3-270m"
    fingerprints = {artefact_fingerprint(PRETRAINED / "gemma3-270m" / "router.safetensors"),
                    artefact_fingerprint(GENERATORS / "gemma3-270m" / GENERATOR_FILE)}
    for name in builtin_names():
        for method in prebuilt.stateful():
            path = root / name / f"{method}.safetensors"
            assert artefact_kind(path), path
            fingerprints.add(artefact_fingerprint(path))
        answers = json.loads((root / name / prebuilt.ANSWERS).read_text())
        fingerprints.add(answers["fingerprint"])
        assert (answers["query"], answers["shots"], answers["seed"]) == (prebuilt.example_query(name), SHOTS, 0)
        assert set(answers["answers"]) == set(REGISTRY), name
        views = json.loads((root / name / prebuilt.VIEWS).read_text())
        fingerprints.add(views["fingerprint"])
        assert {"evaluate", "rank1"} <= set(views["views"]), name
        # the anchors need label words with distinct first tokens: zh-news-topic's all start with "▁" here
        anchors = builtin_task(name).kind == "classification" and name != "zh-news-topic"
        assert ("flow" in views["views"]) == anchors, name
    assert len(fingerprints) == 1 and fingerprints.pop().startswith("gemma3-270m@")


def test_prebuilt_views_leave_out_only_the_analysis_that_cannot_serve_the_task(lm, monkeypatch, capsys):
    """Labels sharing their first token (as a Chinese task's do in Gemma's tokenizer, where each starts with "▁")
    stop the anchor analyses; the rank-1 views and Evaluate's run still ship."""
    from icr_app import prebuilt
    from icr_app.core.tasks import Example, Task

    monkeypatch.setitem(prebuilt.EVALUATE, "n_test", 4)
    examples = tuple(Example(f"city {i} {'north' if i % 2 else 'south'}", "new york" if i % 2 else "new jersey")
                     for i in range(16))
    views = prebuilt.compute_views(lm, Task("cities", examples, "classification"))
    assert "evaluate" in views and "rank1" in views and "flow" not in views
    assert "cities: no anchors views: the anchors analyses score the first answer token" in capsys.readouterr().out
