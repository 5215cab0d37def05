"""Several seeds in one run, and data-parallel evaluation over processes with accelerate."""

import json

import pytest
from helpers import launch, untimed

from icr_app.cli import main
from icr_app.stats import wilson

ARGS = ["eval", "--data", "emotion", "--n-test", "7", "--shots", "2", "--methods", "zero-shot,few-shot"]


def test_a_seeded_run_reproduces_its_json_exactly(tiny_checkpoint, tmp_path, capsys):
    """Two runs over seeds 0,1 write the same JSON but for the timings; each seed is a whole run of its own."""
    outs = [tmp_path / "a.json", tmp_path / "b.json"]
    for out in outs:
        assert main([*ARGS, "--model", tiny_checkpoint, "--seeds", "0,1", "--json", str(out)]) == 0
    assert "seeds=0,1" in capsys.readouterr().out
    a, b = (json.loads(p.read_text()) for p in outs)
    assert untimed(a) == untimed(b)
    assert a["seeds"] == [0, 1] and "seed" not in a
    few = a["methods"]["few-shot"]
    per_seed = few["per_seed"]
    assert [r["seed"] for r in per_seed] == [0, 1] and all(len(r["correct"]) == 7 for r in per_seed)
    assert few["accuracy"] == (per_seed[0]["accuracy"] + per_seed[1]["accuracy"]) / 2
    assert few["accuracy_sd"] == abs(per_seed[0]["accuracy"] - per_seed[1]["accuracy"]) / 2**0.5
    assert few["ci95"] == wilson(sum(few["correct"]), 14) and few["n"] == 14
    assert [(c["a"], c["b"]) for c in a["paired"]] == [("few-shot", "zero-shot")]


@pytest.mark.slow
def test_two_processes_score_the_same_items_as_one(tiny_checkpoint, tmp_path):
    """`accelerate launch` over two CPU processes: each builds the methods (the task vector's seeded build gives
    the same vector in both) and scores half the items; the gathered JSON is one process's."""
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    args = [*ARGS, "--methods", "zero-shot,few-shot,task-vector", "--model", tiny_checkpoint]
    assert main([*args, "--json", str(one)]) == 0
    run = launch([*args, "--json", str(two)])
    assert run.returncode == 0, run.stderr[-3000:]
    assert "test items split over 2 processes" in run.stderr
    assert run.stdout.count("task=emotion") == 1  # the first process prints, the other only scores
    a, b = json.loads(one.read_text()), json.loads(two.read_text())
    assert untimed(a) == untimed(b)
    assert all(r["latency_s"] > 0 for r in b["methods"].values())
