"""bench/parity's glue: the data it hands to the authors' code is ICL Lab's split, and the comparison measures what
it says (no authors' code needed)."""

import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from icr_app.core.tasks import builtin_task, split
from icr_app.methods.site.method import SiteConfig, _holdout
from icr_app.methods.task_vector import TaskVectorConfig, holdout

PARITY = Path(__file__).parents[1] / "bench" / "parity"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, PARITY / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sys.path.insert(0, str(PARITY))  # the comparisons import each other's helpers, as they do when run as scripts
handover = _load("handover")
compare = _load("compare_site")
compare_tv = _load("compare_tv")


def test_handed_over_split_is_the_eval_split_cut_as_site_cuts_it():
    task = builtin_task("antonyms", kind="open")
    files = handover.task_files(task, n_test=12, seed=3, method="site")
    train, test = split(task, 12, 3, min_train=10)  # evaluate's call: min_train = max(2, SHOTS)
    fit, val = _holdout(train, SiteConfig(), 3)
    assert files["test"] == [{"input": e.input, "output": e.output} for e in test.examples]
    assert [r["input"] for r in files["train"]] == [e.input for e in fit]
    assert [r["input"] for r in files["valid"]] == [e.input for e in val]
    used = [r["input"] for part in files.values() for r in part]
    assert len(used) == len(set(used)) == len(task.examples)  # every example once: no test item leaks into training


def test_checkpoint_for_transformers_4_has_the_rope_base_at_top_level(tmp_path):
    src, dst = tmp_path / "v5", tmp_path / "v4"
    src.mkdir()
    (src / "model.safetensors").write_bytes(b"weights")
    (src / "tokenizer.json").write_text("{}")
    rope = {"rope_theta": 100000.0, "rope_type": "default"}
    (src / "config.json").write_text(json.dumps({"model_type": "llama", "dtype": "float32", "rope_parameters": rope}))
    tok_config = {"tokenizer_class": "TokenizersBackend", "eos_token": "</s>"}
    (src / "tokenizer_config.json").write_text(json.dumps(tok_config))
    handover.write_checkpoint(src, dst)
    config = json.loads((dst / "config.json").read_text())
    assert config["rope_theta"] == 100000.0 and config["torch_dtype"] == "float32"
    assert config["rope_parameters"]["rope_theta"] == 100000.0  # what transformers 5 reads stays
    tok = json.loads((dst / "tokenizer_config.json").read_text())
    assert tok == {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "</s>"}
    assert (dst / "model.safetensors").is_symlink() and (dst / "model.safetensors").read_bytes() == b"weights"


def test_agreement_measures_linear_and_rank_correlation():
    a = torch.arange(12.0).reshape(3, 4)
    assert compare.agreement(a, 2 * a + 1) == pytest.approx({"pearson": 1.0, "spearman": 1.0})
    assert compare.agreement(a, a.exp())["spearman"] == pytest.approx(1.0)
    assert compare.agreement(a, a.exp())["pearson"] < 0.9  # monotone, not linear
    assert compare.agreement(a, -a) == pytest.approx({"pearson": -1.0, "spearman": -1.0})
    t = torch.randn(2, 3, 5)
    assert compare.mean_cosine(t, 3 * t) == pytest.approx(1.0)
    assert compare.mean_cosine(t, -t) == pytest.approx(-1.0)


def _unit(task: str, ours: list[bool], authors: list[bool]) -> dict:
    hits = {"first-token": ours, "exact": ours}
    return {"task": task, "hits": {side: hits for side in compare.SIDES},
            "authors": {"site": authors, "zero-shot": authors},
            "alpha": {"pearson": 0.5, "spearman": 0.4}, "alpha_reseeded": {"pearson": 0.7, "spearman": 0.6}}


def test_summary_pools_seeds_and_pairs_items():
    units = [_unit("a", [True] * 3, [False] * 3), _unit("a", [True, True, False], [False, False, False])]
    out = compare.summary(units)
    assert out["n"] == 6
    assert out["first-token accuracy"]["ours"] == pytest.approx(5 / 6)
    assert out["first-token accuracy"]["authors"] == 0.0
    # 5 items only ours gets right, none only theirs: exact McNemar p = 2 / 2**5
    assert out["ours vs authors"]["p_mcnemar"] == pytest.approx(2 / 32)
    assert out["zero-shot items that agree"] == out["theirs in ours items that agree"] == 1
    assert out["alpha pearson"] == [0.5, 0.5] and out["alpha spearman, ours reseeded"] == [0.6, 0.6]


def test_table_row_reads_the_summary():
    units = [_unit("a", [True] * 3, [False] * 3), _unit("a", [True, True, False], [False, False, False])]
    row = compare.table_row("a", compare.summary(units))
    assert row == "| SITE | a | 6 | 0.83 | 0.83 | 0.00 | 0.06 | 0.83 | 0.50 / 0.40 | 0.70 / 0.60 | 1/6 |"


def test_handed_over_task_vector_split_is_cut_as_its_build_cuts_it():
    task = builtin_task("antonyms", kind="open")
    files = handover.task_files(task, n_test=12, seed=3, method="task-vector")
    train, test = split(task, 12, 3, min_train=10)
    source, val = holdout(train, TaskVectorConfig().val_size, 3)
    assert files["test"] == [{"input": e.input, "output": e.output} for e in test.examples]
    assert [r["input"] for r in files["train"]] == [e.input for e in source.examples]
    assert [r["input"] for r in files["valid"]] == [e.input for e in val]
    used = [r["input"] for part in files.values() for r in part]
    assert len(used) == len(set(used)) == len(task.examples)


def _tv_unit(ours: list[bool], authors: list[bool], layers: tuple[int, int, int], spearman: float) -> dict:
    hits = {side: ours for side in compare_tv.SIDES}
    hits |= {"authors task-vector": authors, "authors few-shot": authors, "authors zero-shot": ours}
    return {"task": "a", "hits": hits, "replayed items that agree": len(ours),
            "layer": dict(zip(("ours", "ours reseeded", "theirs"), layers)),
            "curve": {"spearman": spearman}, "curve reseeded": {"spearman": 0.9}, "cosine at our layer": 0.99}


def test_task_vector_summary_and_row():
    units = [_tv_unit([True] * 3, [False] * 3, (20, 21, 22), 0.5),
             _tv_unit([True, True, False], [False, False, False], (20, 20, 23), 0.7)]
    out = compare_tv.summary(units)
    assert out["n"] == 6 and out["first-token accuracy"]["ours"] == pytest.approx(5 / 6)
    assert out["ours vs authors"]["p_mcnemar"] == pytest.approx(2 / 32)
    assert out["layers (ours, reseeded, theirs)"] == [[20, 21, 22], [20, 20, 23]]
    row = compare_tv.table_row("a", out)
    assert row == ("| task vector | a | 6 | 0.83 | 0.83 | 0.00 | 0.06 | 0.83 | 0.83 | 20, 21 / 22; 20, 20 / 23 | "
                   "0.60 / 0.90 | 0.990 | 6/6 |")


def test_task_vector_at_another_layer_patches_that_vector_there(lm):
    from icr_app.methods import build_method

    task = builtin_task("antonyms", kind="open")
    ours = build_method(lm, task, "task-vector", TaskVectorConfig(n_prompts=2, n_demos=2, val_size=2))
    theta = torch.randn(lm.model.config.hidden_size)
    moved = compare_tv.at_layer(ours, theta, 0)
    assert moved.state.meta.layer == 0 and torch.equal(moved.vector, theta)
    assert not torch.equal(ours.vector, theta)  # the built method is left as it was


units_glue = _load("units")


def test_units_resume_and_report_per_task_and_pooled(tmp_path, capsys):
    calls = []

    def compare(name: str) -> dict:
        calls.append(name)
        return {"unit": name, "task": name.split("-")[0], "hit": len(name)}

    (tmp_path / "m" / "a-s0").mkdir(parents=True)
    (tmp_path / "m" / "a-s0" / "compare.json").write_text(json.dumps({"unit": "a-s0", "task": "a", "hit": 1}))
    for name in ("a-s1", "b-s0"):
        (tmp_path / "m" / name).mkdir()
    units = units_glue.compared(tmp_path, "m", ["a-s0", "a-s1", "b-s0"], compare, lambda u: str(u["hit"]))
    assert calls == ["a-s1", "b-s0"] and [u["hit"] for u in units] == [1, 4, 4]  # the finished unit is read back
    out = units_glue.report(tmp_path, "m", units, lambda us: {"n": len(us)}, lambda task, s: f"| {task} | {s['n']} |")
    assert out == {"a": {"n": 2}, "b": {"n": 1}, "all": {"n": 3}}
    assert json.loads((tmp_path / "m" / "summary.json").read_text()) == out
    assert "| a | 2 |\n| b | 1 |\n| all | 3 |" in capsys.readouterr().out
    assert units_glue.mean([1.0, float("nan"), 3.0]) == 2.0  # a constant curve's undefined correlation is left out


compare_fv = _load("compare_fv")


def test_handed_over_function_vector_split_is_its_whole_training_part_twice():
    task = builtin_task("antonyms", kind="open")
    files = handover.task_files(task, n_test=12, seed=3, method="function-vector")
    train, test = split(task, 12, 3, min_train=10)
    assert files["test"] == [{"input": e.input, "output": e.output} for e in test.examples]
    # the build draws demonstrations and queries alike from the whole part, so their train and valid are it
    assert files["train"] == files["valid"] == [{"input": e.input, "output": e.output} for e in train.examples]
    assert not {r["input"] for r in files["test"]} & {r["input"] for r in files["train"]}


def test_function_vector_heads_compared_by_overlap_and_answers_weighted_equally():
    a = torch.arange(12.0).view(3, 4)  # best heads: (2, 3), (2, 2), (2, 1), ...
    b = a.clone()
    b[2, 3] = -1.0
    assert compare_fv.overlap(a, b, k=3) == 2 and compare_fv.overlap(a, a, k=3) == 3
    effects = torch.tensor([[[1.0]], [[1.0]], [[1.0]], [[-3.0]]])  # three prompts of one answer, one of the other
    assert compare_fv.balanced(effects, ["pos", "pos", "pos", "neg"]).item() == pytest.approx(-1.0)  # not 0.0
    cfg = compare_fv.matched({"n_clean": 24, "n_trials": 4, "n_shots": 10, "top_k": 20, "layer": 10})
    assert (cfg.n_prompts, cfg.n_corrupted, cfg.n_demos, cfg.top_k, cfg.layer) == (24, 4, 10, 20, 10)


def test_their_sampler_with_the_query_apart_never_draws_a_query_among_its_demonstrations():
    import numpy as np

    fv_authors = _load("fv_authors")
    theirs, apart = SimpleNamespace(np=np), SimpleNamespace(np=np)
    fv_authors.keep_query_apart([apart])
    assert apart.np.arange(3).tolist() == [0, 1, 2] and theirs.np is np  # the rest of NumPy as it was

    def prompts(module) -> list[tuple[set, int]]:  # as their samplers draw: 10 of 24 demonstrations, then a query
        np.random.seed(0)
        return [(set(module.np.random.choice(24, 10, replace=False).tolist()),
                 int(module.np.random.choice(np.arange(24), 1, replace=False)[0])) for _ in range(200)]

    state = np.random.get_state()  # their samplers use NumPy's global generator; the other tests get it back
    try:
        drawn, drawn_apart = prompts(theirs), prompts(apart)
    finally:
        np.random.set_state(state)
    assert sum(q in demos for demos, q in drawn) > 40  # unchanged, about 10 in 24 prompts hold their query
    assert not any(q in demos for demos, q in drawn_apart)
    assert drawn_apart[0][0] == drawn[0][0]  # the same seeded generator, two draws a prompt


def test_their_queries_among_their_demonstrations_are_counted():
    def prompt(demos: list[str], query: str) -> dict:
        return {"prompt": "".join(f"Input: {x}\nOutput: y\n\n" for x in demos) + f"Input: {query}\nOutput:"}

    items = {"settings": {"prefixes": {"input": "Input:"}},
             "prompts": {"clean": [prompt(["a", "b"], "b"), prompt(["a", "b"], "c"), prompt(["ab", "b"], "a")],
                         "corrupted": [prompt(["c", "a"], "a")]}}
    assert compare_fv.queries_among_demos(items) == [1, 1]


def test_their_function_vector_in_ours_is_added_at_their_layer(lm):
    from icr_app.methods import build_method
    from icr_app.methods.function_vector import FunctionVectorConfig
    from icr_app.methods.zero_shot import ZeroShotMethod

    task = builtin_task("antonyms", kind="open")
    cfg = FunctionVectorConfig(n_prompts=2, n_corrupted=2, n_demos=2)
    ours = build_method(lm, task, "function-vector", cfg)
    theirs = torch.randn_like(ours.state.fv)
    moved = compare_fv.theirs_in_ours(ours, theirs, 0)
    assert moved.state.meta.layer == 0 and torch.equal(moved.state.fv, theirs)
    assert not torch.equal(ours.state.fv, theirs)  # the built method is left as it was
    queries = [e.input for e in task.examples[:4]]
    nothing = compare_fv.theirs_in_ours(ours, torch.zeros_like(theirs), 0)
    zero_shot = ZeroShotMethod(lm, ours.answering)
    assert [p.first_token for p in nothing.predict(queries)] == [p.first_token for p in zero_shot.predict(queries)]
