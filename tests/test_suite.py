"""`icl-lab suite`: task sources, resuming after an interruption, and two processes giving one process's summary."""

import csv
import json
import sys
from dataclasses import asdict

import pytest
from browser import CHROMIUM
from helpers import launch, untimed

import icr_app.suite_run as suite
from icr_app.cli import main
from icr_app.core.tasks import TaskError
from icr_app.evaluation import EvalReport, MethodResult
from icr_app.stats import paired, wilson
from icr_app.suite_report import method_rows, pooled_rows, write_figures

ARGS = ["suite", "--tasks", "sentiment,antonyms", "--methods", "zero-shot,few-shot", "--seeds", "0,1",
        "--n-test", "6", "--shots", "2"]


def _outputs(out):
    """Everything a suite reports but the timings: the task JSONs and both CSV tables."""
    tables = {name: list(csv.DictReader((out / name).open())) for name in ("summary.csv", "methods.csv")}
    return untimed({**{t: json.loads((out / f"{t}.json").read_text()) for t in ("sentiment", "antonyms")}, **tables})


def test_tasks_are_builtin_names_files_or_folders(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    for name in ("b.csv", "a.json", "notes.txt"):
        (folder / name).write_text("")
    assert suite.task_sources(["sentiment", folder, "x/y/other.jsonl"]) == {
        "sentiment": "sentiment", "a": str(folder / "a.json"), "b": str(folder / "b.csv"), "other": "x/y/other.jsonl"}
    with pytest.raises(TaskError, match="more than one task named a"):
        suite.task_sources([folder, "elsewhere/a.jsonl"])
    with pytest.raises(TaskError, match="no task files"):
        suite.task_sources([tmp_path])


def test_a_spec_in_two_groups_runs_once():
    both = suite.task_sources(["icr-paper", "i2cl-paper", "hf:sst2"])
    assert len(both) == 16 and both["sst2"] == "hf:sst2"  # five of I2CL's nine are in the ICR paper's group


@pytest.mark.slow
def test_an_interrupted_suite_does_only_the_rest_when_restarted(tiny_checkpoint, tmp_path, monkeypatch, capsys):
    """Killed during its second task × seed, a suite restarted runs only that one and reports as a suite never
    stopped would; a method added later runs alone beside zero-shot (for its latency ratio); other settings in
    the same folder are refused."""
    runs, real = [], suite.evaluate

    def counted(lm, task, methods, seed, stop_at=None, **kw):
        runs.append((task.name, seed, tuple(methods)))
        if len(runs) == stop_at:
            raise KeyboardInterrupt
        return real(lm, task, methods, seed=seed, **kw)

    args = [*ARGS, "--seeds", "1", "--model", tiny_checkpoint, "--out", str(tmp_path / "a")]
    monkeypatch.setattr(suite, "evaluate", lambda *a, **kw: counted(*a, stop_at=2, **kw))
    assert main(args) == 130  # Ctrl-C: "cancelled", the shell's status for it
    assert len(runs) == 2 and not (tmp_path / "a" / "summary.md").exists()
    runs.clear()
    monkeypatch.setattr(suite, "evaluate", counted)
    assert main(args) == 0
    assert [r[:2] for r in runs] == [("antonyms", 1)]
    assert main([*args[:-1], str(tmp_path / "b")]) == 0
    assert _outputs(tmp_path / "a") == _outputs(tmp_path / "b")
    runs.clear()
    more = [*args[:4], "zero-shot,few-shot,task-vector", *args[5:]]
    assert main(more) == 0
    assert {r[2] for r in runs} == {("task-vector", "zero-shot")} and len(runs) == 2
    assert "task-vector" in (tmp_path / "a" / "summary.md").read_text()
    assert main([*more, "--n-test", "5", "--task-vector-layer", "1"]) == 2
    assert "holds results made with another n_test, task-vector's config" in capsys.readouterr().err


@pytest.mark.slow
def test_two_processes_give_the_summary_of_one(tiny_checkpoint, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    assert main([*ARGS, "--model", tiny_checkpoint, "--out", str(one)]) == 0
    run = launch([*ARGS, "--model", tiny_checkpoint, "--out", str(two)])
    assert run.returncode == 0, run.stderr[-3000:]
    assert _outputs(one) == _outputs(two)
    pngs = ["accuracy-vs-latency.png", "heatmap.png"] if CHROMIUM else []  # CI has chromium (test_browser)
    assert sorted(p.name for p in two.iterdir()) == sorted([
        "accuracy-vs-latency.html", "antonyms.json", "heatmap.html", "methods.csv", "plotly.min.js", "pooled.csv",
        "sentiment.json", "settings.json", "summary.csv", "summary.md", "units", *pngs])
    for png in pngs:
        data = (two / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, png


@pytest.mark.slow
def test_the_library_suite_takes_tasks_and_configs_and_returns_what_it_writes(lm, tmp_path):
    """`icl.suite` over a `Task` and a built-in name, with a config of the caller's: it returns each task's report,
    the JSON it writes, one run per seed; a second call finds every unit done and runs nothing."""
    import icr_app as icl
    from icr_app.core.tasks import builtin_task, make_task

    mine = make_task("mine", [(e.input, e.output) for e in builtin_task("sentiment").examples[:20]])
    few = icl.method_specs()["few-shot"].config()
    reports = icl.suite(lm, [mine, "antonyms"], ["zero-shot", "few-shot"], seeds=[0, 1], n_test=4, shots=2,
                        configs={"few-shot": few}, out=tmp_path)
    assert list(reports) == ["mine", "antonyms"]
    for name, rep in reports.items():
        assert rep == json.loads((tmp_path / f"{name}.json").read_text()) and rep["seeds"] == [0, 1]
    assert json.loads((tmp_path / "settings.json").read_text())["configs"]["few-shot"] == json.loads(
        json.dumps(asdict(few)))
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "units").rglob("*.json")}
    assert icl.suite(lm, [mine, "antonyms"], ["zero-shot", "few-shot"], seeds=[0, 1], n_test=4, shots=2,
                     out=tmp_path) == reports
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "units").rglob("*.json")} == before


def test_an_item_every_seed_draws_is_one_item_to_the_paired_tests(lm, tmp_path):
    """A task whose own test split is smaller than n_test gives every seed the same items, in another order: the
    report names them, each seed's zero-shot answers them alike (the names follow the items), and the paired
    tests count each once. A task whose data changed under its units is refused, not misread."""
    import icr_app as icl
    from icr_app.core.tasks import Example, Task, builtin_task

    rows = builtin_task("sentiment").examples
    task = Task("fixed", rows[:12], "classification", test_examples=rows[12:16])
    rep = icl.suite(lm, [task], ["zero-shot", "few-shot"], seeds=[0, 1, 2], n_test=6, shots=2, out=tmp_path)["fixed"]
    items = rep["items"]
    assert len(items) == 12 and len(set(items)) == 4 and items[:4] != items[4:8]  # each seed: the four, reshuffled
    answers = {}
    for key, ok in zip(items, rep["methods"]["zero-shot"]["correct"]):
        assert answers.setdefault(key, ok) == ok
    correct = {m: rep["methods"][m]["correct"] for m in ("zero-shot", "few-shot")}
    assert rep["paired"][0]["p_mcnemar"] == paired(correct["few-shot"], correct["zero-shot"], items)["p_mcnemar"]
    _, comparisons = pooled_rows({"fixed": rep}, ["zero-shot", "few-shot"])
    assert (comparisons[0]["n"], comparisons[0]["distinct"]) == (12, 4)
    changed = Task("fixed", rows[:12], "classification", test_examples=(*rows[12:15], Example("new", "positive")))
    with pytest.raises(ValueError, match="data changed since they were made"):
        icl.suite(lm, [changed], ["zero-shot", "few-shot"], seeds=[0, 1, 2], n_test=6, shots=2, out=tmp_path)


def test_figures_stay_html_with_the_reason_when_png_export_fails(tmp_path, monkeypatch):
    def no_browser(self, *args, **kwargs):
        raise RuntimeError("no Chrome found")

    monkeypatch.setattr("plotly.graph_objects.Figure.write_image", no_browser)
    cells = [{"task": "t", "method": "zero-shot", "accuracy": 0.5, "ci95_low": 0.4, "ci95_high": 0.6,
              "latency_ratio_to_zero_shot": 1.0, "error": None}]
    written, why = write_figures(tmp_path, cells, ["zero-shot"])
    assert written == ["heatmap.html", "accuracy-vs-latency.html"]
    assert why.startswith("Figures as HTML only: kaleido could not export it (RuntimeError: no Chrome found)")


def test_without_plotly_the_summary_says_why_it_has_no_figures(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "plotly", None)  # as a library install (`pip install .`) has it
    cells = [{"task": "t", "method": "zero-shot", "accuracy": 0.5, "ci95_low": 0.4, "ci95_high": 0.6,
              "latency_ratio_to_zero_shot": 1.0, "error": None}]
    written, why = write_figures(tmp_path, cells, ["zero-shot"])
    assert written == [] and not list(tmp_path.iterdir())
    assert why.startswith("No figures: plotly is not installed")


def _report(task_correct: dict[str, list[bool]]) -> dict:
    results = {m: MethodResult(accuracy=sum(c) / len(c), ci95=wilson(sum(c), len(c)), first_token_accuracy=0.0,
                               latency_ratio_to_zero_shot=1.0, build_s=0.0, n=len(c), correct=c)
               for m, c in task_correct.items()}
    return EvalReport("t", "m", 10, 0, "open", results).to_json()


def test_the_method_table_counts_wins_and_significant_losses_to_zero_shot():
    """Task a: few-shot 8 of 10 against none; task b: 2 against 10, all 8 discordant items zero-shot's
    (McNemar p = 2 / 2**8): few-shot wins a and is significantly below zero-shot on b."""
    reports = {"a": _report({"zero-shot": [False] * 10, "few-shot": [True] * 8 + [False] * 2}),
               "b": _report({"zero-shot": [True] * 10, "few-shot": [True] * 2 + [False] * 8})}
    rows = {r["method"]: r for r in method_rows(reports, ["zero-shot", "few-shot"])}
    assert rows["few-shot"]["wins"] == 1 and rows["zero-shot"]["wins"] == 1
    assert rows["few-shot"]["below_zero_shot"] == 1 and rows["few-shot"]["significantly_below_zero_shot"] == 1
    assert rows["few-shot"]["mean_accuracy"] == 0.5 and rows["zero-shot"]["below_zero_shot"] == 0


def test_the_summary_says_how_many_test_items_each_task_had():
    """A test split smaller than --n-test (CB has 56 where others give 100) makes a range, not "5,10", which reads
    as one number."""
    from icr_app.suite_report import markdown

    full, small = _report({"zero-shot": [True] * 4}), {**_report({"zero-shot": [True] * 4}), "n_test": 5}
    assert markdown({"a": full}, ["zero-shot"], [0, 1], [], []).startswith(
        "Seeds 0, 1; 10 test items per task and seed.")
    assert markdown({"a": full, "b": small}, ["zero-shot"], [0], [], []).startswith(
        "Seeds 0; 5 to 10 test items per task and seed.")


def test_pooled_orderings_pair_the_items_of_the_tasks_both_methods_served():
    """a is right on every item, b on half, zero-shot on none of task x; c failed on task y, so its pooled
    accuracy and its comparisons use task x alone."""
    def method(correct=None, error=None):
        return {"correct": correct, "error": None} if error is None else {"error": error}
    reports = {"x": {"methods": {"zero-shot": method([False] * 4), "a": method([True] * 4),
                                 "b": method([True, True, False, False]), "c": method([True, False, False, False])}},
               "y": {"methods": {"zero-shot": method([True] * 2), "a": method([True] * 2),
                                 "b": method([True, False]), "c": method(error="one class")}}}
    accuracy, comparisons = pooled_rows(reports, ["zero-shot", "a", "b", "c"])
    assert [(r["method"], r["n"], r["accuracy"]) for r in accuracy] == [
        ("zero-shot", 6, 2 / 6), ("a", 6, 1.0), ("b", 6, 0.5), ("c", 4, 0.25)]
    assert accuracy[1]["ci95_low"] == wilson(6, 6)[0]
    pairs = [(c["a"], c["b"], c["n"], c["diff"]) for c in comparisons]
    assert pairs == [("a", "b", 6, 0.5), ("b", "zero-shot", 6, 1 / 6), ("zero-shot", "c", 4, -0.25),
                     ("a", "zero-shot", 6, 4 / 6)]  # each pair once
    assert comparisons[3]["p_mcnemar"] == pytest.approx(2 * 0.5 ** 4)
