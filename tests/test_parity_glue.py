"""bench/parity's glue: the data it hands to the authors' code is ICL Lab's split, and the comparison measures what
it says (no authors' code needed)."""

import importlib.util
import json
from pathlib import Path

import pytest
import torch

from icr_app.core.tasks import builtin_task, split
from icr_app.methods.site.method import SiteConfig, _holdout

PARITY = Path(__file__).parents[1] / "bench" / "parity"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, PARITY / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


handover = _load("handover")
compare = _load("compare_site")


def test_handed_over_split_is_the_eval_split_cut_as_site_cuts_it():
    task = builtin_task("antonyms", kind="open")
    files = handover.task_files(task, n_test=12, seed=3, site=SiteConfig())
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
