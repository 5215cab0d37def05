"""The ICR benchmark's statistics decide which router ships, so they are tested on runs written by hand."""

import argparse
import importlib.util
import json
from pathlib import Path

import pytest

BENCH = Path(__file__).parents[1] / "bench" / "icr_benchmark.py"
_spec = importlib.util.spec_from_file_location("icr_benchmark", BENCH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def _task(group: str, zero_shot: list[bool], icr: list[bool]) -> dict:
    return {"group": group, **{m: {"acc": sum(c) / len(c), "ms": 10.0, "n": len(c), "correct": c}
                               for m, c in (("zero-shot", zero_shot), ("icr", icr))}}


def _write(tmp_path: Path, name: str, runs: dict) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(runs))
    return f"{name}={path}"


def test_sign_test_is_exact_and_two_sided():
    assert bench.sign_test_items([True] * 5, [False] * 5) == (5, 0, pytest.approx(2 / 32))
    assert bench.sign_test_items([False] * 5, [True] * 5) == (0, 5, pytest.approx(2 / 32))
    # 3 against 1: p = 2 * (C(4,0) + C(4,1)) / 16 = 0.625; agreements do not count.
    assert bench.sign_test_items([True, True, True, False, True], [False, False, False, True, True])[2] == 0.625
    assert bench.sign_test_items([True, False], [True, False]) == (0, 0, 1.0)


def test_benchmark_task_files_exist():
    for group in ("h-domains", "fresh", "fresh-2"):
        assert all(Path(p).is_file() for p in bench.GROUPS[group]), group


def test_compare_reports_gain_and_collapses_per_group(tmp_path, capsys):
    runs = {"a": _task("fresh-2", [False] * 10, [True] * 2 + [False] * 8),
            "b": _task("fresh-2", [True] * 10, [True] * 9 + [False])}
    bench.compare(argparse.Namespace(routers=[_write(tmp_path, "R", runs)]))
    out = capsys.readouterr().out
    assert "fresh-2 (8)" in out.splitlines()[0]
    row = out.splitlines()[2]
    assert row.startswith("| R |") and "+5.0 pts, 1 collapses (0 significant)" in row


def test_versus_counts_items_only_one_router_got_right(tmp_path, capsys):
    a = _write(tmp_path, "A", {"t": _task("fresh-2", [False] * 4, [True, True, True, False])})
    b = _write(tmp_path, "B", {"t": _task("fresh-2", [False] * 4, [False, False, True, True])})
    bench.versus(argparse.Namespace(a=a, b=b))
    assert "| fresh-2 | 1 | 2 | 1 | 1.000 |" in capsys.readouterr().out


def test_versus_refuses_runs_on_different_items(tmp_path):
    a = _write(tmp_path, "A", {"t": _task("fresh", [False] * 4, [True] * 4)})
    b = _write(tmp_path, "B", {"t": _task("fresh", [False] * 5, [True] * 5)})
    with pytest.raises(SystemExit, match="different test items"):
        bench.versus(argparse.Namespace(a=a, b=b))


def test_icr_claim_splits_trained_on_from_fresh_tasks_and_sets_icr_beside_ten_shot(tmp_path, capsys, monkeypatch):
    """Trained-on task: zero-shot 0/4, 10-shot 4/4, icr 2/4 (half the 10-shot gain). Fresh task `season`: icr
    loses one item against zero-shot (a collapse, not significant). `elsewhere` is neither."""
    import torch

    from icr_app.core.artefacts import save_artefact
    from icr_app.evaluation import EvalReport, MethodResult

    spec = importlib.util.spec_from_file_location("icr_claim", BENCH.parent / "icr_claim.py")
    claim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(claim)
    save_artefact(tmp_path / "router" / "router.safetensors", "icr-router", {"u": torch.zeros(1)},
                  {"pids": {"domains": ["sentiment", "ag_news"]}})
    runs = {"sentiment": ([False] * 4, [True] * 4, [True, True, False, False]),
            "season": ([True, True, False, False], [True, True, True, False], [True, False, False, False]),
            "elsewhere": ([False] * 4, [False] * 4, [False] * 4)}
    (tmp_path / "suite").mkdir()
    for task, lists in runs.items():
        methods = {m: MethodResult(accuracy=sum(c) / 4, correct=c) for m, c in zip(claim.METHODS, lists)}
        rep = EvalReport(task, "tiny", 4, 0, "classification", methods).to_json()
        (tmp_path / "suite" / f"{task}.json").write_text(json.dumps(rep))
    (tmp_path / "suite" / "settings.json").write_text("{}")
    monkeypatch.setattr("sys.argv", ["icr_claim", "--model", "tiny", str(tmp_path / "router"), str(tmp_path / "suite")])
    claim.main()
    rows = [line.split(" | ") for line in capsys.readouterr().out.splitlines()[2:]]
    assert [r[1] for r in rows] == ["trained on (sentiment)", "bench/fresh* (season)", "other unseen (elsewhere)"]
    assert rows[0][6:10] == ["+100.0", "+50.0", "0.50", "0 (0)"]
    assert rows[1][6:10] == ["+25.0", "-25.0", "-1.00", "1 (0)"]
    assert rows[2][8:10] == ["-", "0 (0)"]  # no 10-shot gain: no ratio
    (tmp_path / "suite" / "season.json").write_text(json.dumps({**rep, "task": "season", "methods": {
        **rep["methods"], "icr": {**rep["methods"]["icr"], "error": "no router"}}}))
    with pytest.raises(SystemExit, match="icr did not run or failed"):
        claim.main()
