"""Built methods inside lm-evaluation-harness (`icl.harness_lm`, `icl-lab harness`), on the tiny model and three
harness tasks over the dozen lines in tests/data/harness/: multiple choice (loglikelihood), generation
(generate_until) and perplexity (loglikelihood_rolling). lm-eval runs offline: the data is a local JSON file."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
import torch
from helpers import TINY_SITE, TINY_TV, hash_encoder, new_routing_router, no_hooks

import icr_app as icl
from icr_app.cli import main
from icr_app.core.prompts import Template
from icr_app.core.scoring import generate
from icr_app.core.tasks import builtin_task
from icr_app.harness import evaluate_tasks, plain_lm
from icr_app.methods import REGISTRY, build_method
from icr_app.methods.base import Answering, Method
from icr_app.methods.icr import router as router_module
from icr_app.methods.icr.method import ICRMethod
from icr_app.methods.last_token import add_at, edit_block_output

ROOT = Path(__file__).resolve().parents[1]
TASKS = ("icl_lab_tiny_sentiment", "icl_lab_tiny_sentiment_gen", "icl_lab_tiny_sentiment_text")
FOLDER = "tests/data/harness"  # the YAML files name their data relative to the repository's root
LABELS = ("negative", "positive")


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="module")
def built(lm):
    """SITE and a task vector built on the tiny model from the built-in sentiment task."""
    task = builtin_task("sentiment")
    return {name: build_method(lm, task, name, config) for name, config in (("site", TINY_SITE),
                                                                            ("task-vector", TINY_TV))}


@pytest.fixture(scope="module")
def plain(lm) -> dict:
    """lm-eval's own HFLM on the tiny model: the numbers to compare with."""
    return run(plain_lm(lm))


def run(model) -> dict:
    return evaluate_tasks(model, TASKS, include_path=FOLDER)


def answers(results: dict, task: str) -> list:
    """Each document's responses, in document order: (log-likelihood, greedy) pairs, texts or sums."""
    return [row["resps"] for row in sorted(results["samples"][task], key=lambda row: row["doc_id"])]


def test_strength_zero_gives_the_harness_own_numbers(built, plain):
    """SITE with every head weight at 0 (its hooks live, injecting nothing) against lm-eval's own HFLM: the same
    generations and metrics, the same greedy flags, log-likelihoods equal up to float rounding (ICL Lab scores a
    continuation from the context's KV cache, HFLM in one pass over both)."""
    ours, theirs = run(icl.harness_lm(REGISTRY["site"].neutral(built["site"]))), plain
    assert answers(ours, TASKS[1]) == answers(theirs, TASKS[1])
    for task in (TASKS[0], TASKS[2]):
        a, b = answers(ours, task), answers(theirs, task)
        flat_a, flat_b = torch.tensor(_numbers(a)), torch.tensor(_numbers(b))
        assert flat_a.shape == flat_b.shape and torch.allclose(flat_a, flat_b, rtol=0, atol=2e-5), task
        assert _flags(a) == _flags(b)
    for task in TASKS:  # the metrics ("acc,none", ...), not their stderr
        metrics = {key: value for key, value in theirs["results"][task].items() if "," in key and "stderr" not in key}
        assert metrics and {key: ours["results"][task][key] for key in metrics} == pytest.approx(metrics, rel=1e-5)


def _numbers(rows: list) -> list[float]:
    """The log-likelihoods of each document's requests, flattened."""
    return [float(r[0] if isinstance(r, (tuple, list)) else r) for row in rows for resps in row for r in resps]


def _flags(rows: list) -> list[bool]:
    """The greedy flags of each document's loglikelihood requests, flattened."""
    return [r[1] for row in rows for resps in row for r in resps if isinstance(r, (tuple, list))]


def test_a_built_method_changes_them_where_icl_lab_scores(lm, built, plain):
    """A task vector (written over the context's last-token state): the harness's label log-likelihoods are ICL
    Lab's own label scores for the same prompt (the labels are one token each here), and differ from the model's."""
    method = built["task-vector"]
    assert all(len(lm.tokenizer(f" {label}", add_special_tokens=False)["input_ids"]) == 1 for label in LABELS)
    ours, theirs = run(icl.harness_lm(method)), plain
    docs = [json.loads(line) for line in (ROOT / FOLDER / "tiny_sentiment.jsonl").read_text().splitlines()]
    probs = [p.label_probs for p in method.predict([d["text"] for d in docs])]
    for row, p in zip(answers(ours, TASKS[0]), probs):
        ll = [r[0][0] for r in row]
        norm = math.log(sum(math.exp(x) for x in ll))
        assert [math.exp(x - norm) for x in ll] == pytest.approx([p[label] for label in LABELS], abs=1e-5)
    assert answers(ours, TASKS[0]) != answers(theirs, TASKS[0])
    assert answers(ours, TASKS[2]) != answers(theirs, TASKS[2])


def _label_probs(results: dict) -> list[list[float]]:
    """Each document's label probabilities: its answers' log-likelihoods normalised over the labels."""
    rows = [[r[0][0] for r in row] for row in answers(results, TASKS[0])]
    return [[math.exp(x - math.log(sum(math.exp(y) for y in ll))) for x in ll] for ll in rows]


def test_a_method_that_reads_the_query_reads_the_input_as_icl_lab_gives_it(lm, monkeypatch):
    """ICR routes by the query's text: of a context written in its own prompt (`Input: x\nOutput:`) it reads `x`,
    as in ICL Lab, so its label probabilities are ICL Lab's own for the same documents (routed by the whole
    context, they are not)."""
    monkeypatch.setattr(router_module, "minilm_encoder", lambda device: hash_encoder)
    method = ICRMethod.of(lm, new_routing_router(lm).state(), Answering.of(lm, builtin_task("sentiment")))
    docs = [json.loads(line) for line in (ROOT / FOLDER / "tiny_sentiment.jsonl").read_text().splitlines()]
    own = [[p.label_probs[label] for label in LABELS] for p in method.predict([d["text"] for d in docs])]
    assert _label_probs(run(icl.harness_lm(method))) == [pytest.approx(p, abs=1e-5) for p in own]
    monkeypatch.setattr(Template, "input_of", lambda self, prompt: None)  # the whole context as the query
    whole = _label_probs(run(icl.harness_lm(method)))
    assert max(abs(a - b) for p, q in zip(own, whole) for a, b in zip(p, q)) > 1e-3


class Push(Method):
    """A change the tiny model cannot miss: the last block's output at the prompt's last token gets a large multiple
    of token `target`'s embedding (the output head's row, tied), so the first generated token is `target`."""

    name = "push"

    def __init__(self, lm, answering, target: int) -> None:
        super().__init__(lm, answering)
        self.vector = 100.0 * lm.model.get_input_embeddings().weight[target].detach()

    def intervention(self, queries: list[str]):
        return edit_block_output(self.lm, self.lm.n_layers - 1, lambda x: add_at(x, self.vector))


def test_generation_is_icl_lab_generation(lm, plain):
    """generate_until with the method applied gives ICL Lab's own greedy answers under the same change (the
    prefill changed, the decoding steps not), where the model alone answers otherwise."""
    target = lm.tokenizer(" positive", add_special_tokens=False)["input_ids"][0]
    method = Push(lm, icl.build("zero-shot", lm, builtin_task("sentiment")).answering, target)
    ours, theirs = run(icl.harness_lm(method)), plain
    rows = sorted(ours["samples"][TASKS[1]], key=lambda row: row["doc_id"])
    prompts = [row["arguments"][0][0] for row in rows]  # the one request's (context, generation settings)
    own = generate(lm, prompts, 4, method.intervention(prompts), method.decode_intervention(prompts))
    texts = [resps[0][0] for resps in answers(ours, TASKS[1])]
    assert texts == [g.text for g in own] and all(g.first_token == target for g in own)
    assert texts != [resps[0][0] for resps in answers(theirs, TASKS[1])]


def test_the_model_and_tokenizer_are_left_as_they_were(lm, built):
    before = {k: v.clone() for k, v in lm.model.state_dict().items()}
    modules = [(name, type(m), m.training) for name, m in lm.model.named_modules()]
    side, attention = lm.tokenizer.padding_side, lm.model.config._attn_implementation
    lm.model.train()  # HFLM's constructor switches a model to eval; the user's mode must come back
    try:
        run(icl.harness_lm(built["task-vector"]))
        assert lm.model.training
    finally:
        lm.model.eval()
    assert no_hooks(lm) and [(name, type(m), m.training) for name, m in lm.model.named_modules()] == modules
    assert all(torch.equal(v, before[k]) for k, v in lm.model.state_dict().items())
    assert lm.tokenizer.padding_side == side and lm.model.config._attn_implementation == attention


def test_what_the_harness_cannot_run_is_refused(lm, monkeypatch):
    with pytest.raises(icl.HarnessError, match="num_fewshot"):
        icl.harness_lm(icl.build("few-shot", lm, builtin_task("sentiment")))
    monkeypatch.setitem(sys.modules, "lm_eval.models.huggingface", None)  # as if lm-eval were not installed
    from icr_app import harness

    harness._method_lm_class.cache_clear()
    try:
        with pytest.raises(icl.HarnessError, match=r'pip install "icl-lab\[harness\]"'):
            icl.harness_lm(icl.build("zero-shot", lm, builtin_task("sentiment")))
    finally:
        harness._method_lm_class.cache_clear()


def test_the_cli_runs_a_built_file_and_the_model_as_it_is(tiny_checkpoint, tmp_path, capsys):
    method = build_method(icl.load_model(tiny_checkpoint), builtin_task("sentiment"), "task-vector", TINY_TV)
    method.save(tmp_path / "tv.safetensors")
    common = ["--tasks", TASKS[0], "--include-path", FOLDER, "--model", tiny_checkpoint, "--limit", "5"]
    assert main(["harness", "--artefact", str(tmp_path / "tv.safetensors"), *common,
                 "--output", str(tmp_path / "tv")]) == 0
    assert main(["harness", *common, "--num-fewshot", "2", "--output", str(tmp_path / "plain")]) == 0
    assert "icl_lab_tiny_sentiment" in capsys.readouterr().out
    rows = [json.loads(line) for line in (tmp_path / "tv" / f"samples_{TASKS[0]}.jsonl").read_text().splitlines()]
    probs = method.predict([row["doc"]["text"] for row in rows])
    for row, p in zip(rows, probs):
        ll = [r[0][0] for r in row["resps"]]
        assert (ll[1] > ll[0]) == (p.label_probs["positive"] > p.label_probs["negative"])
    plain = json.loads((tmp_path / "plain" / "results.json").read_text())
    assert plain["configs"][TASKS[0]]["num_fewshot"] == 2 and plain["results"][TASKS[0]]["sample_len"] == 5
