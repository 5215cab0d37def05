"""Tasks from dataset specs (`hf:NAME`): the loader on local copies, its errors, and such tasks through `eval`,
the suite (groups, a member without data) and the library. The specs and data here are written by the test."""

import csv
import json

import datasets
import pytest

import icr_app as icl
import icr_app.core.taskspecs as ts
from icr_app.cli import main
from icr_app.core.tasks import TaskError, load_task, split

SPEC = """name: {name}
title: Toy reviews
dataset: nobody/toy-reviews
demos_split: train
test_split: validation
input: "{{sentence}} ({{meta[source]}})"
label: label
verbalizer: {{0: negative, 1: positive}}
template: {{query: "Review: {{x}}\\nSentiment:", sep: "\\n"}}
reference: written by the test
"""
GROUP = """name: toys
title: two toy sets and one without data
parts:
  seen: [toy]
  unseen: [toy2, nodata]
reported:
  - {model: Big-7B, method: zero-shot, overall: 61.5, source: the test}
  - {model: Big-7B, method: few-shot, overall: 70.5, collapses: 2, source: the test}
"""


def rows(n: int, start: int = 0) -> list[dict]:
    return [{"sentence": f"item {i} was {'great' if i % 2 else 'awful'}", "label": i % 2, "meta": {"source": "web"}}
            for i in range(start, start + n)]


def write_jsonl(path, records) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.fixture
def specs(tmp_path, monkeypatch):
    """Three specs (toy, toy2, nodata) and a group of them; toy's data as JSONL files, toy2's as `save_to_disk`."""
    spec_dir, group_dir, data = tmp_path / "specs", tmp_path / "groups", tmp_path / "data"
    spec_dir.mkdir()
    group_dir.mkdir()
    for name in ("toy", "toy2", "nodata"):
        (spec_dir / f"{name}.yaml").write_text(SPEC.format(name=name))
    (group_dir / "toys.yaml").write_text(GROUP)
    write_jsonl(data / "toy" / "train.jsonl", rows(40))
    write_jsonl(data / "toy" / "validation.jsonl", rows(30, start=100))
    datasets.DatasetDict({"train": datasets.Dataset.from_list(rows(20)),
                          "validation": datasets.Dataset.from_list(rows(12, start=200))}).save_to_disk(data / "toy2")
    monkeypatch.setattr(ts, "SPEC_DIR", spec_dir)
    monkeypatch.setattr(ts, "GROUP_DIR", group_dir)
    monkeypatch.setenv(ts.DATA_ENV, str(data))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    return spec_dir, data, group_dir


def test_a_spec_task_reads_its_local_copy_joined_verbalized_and_with_its_prompt(specs):
    task = load_task("hf:toy")
    assert (len(task.examples), len(task.test_examples)) == (40, 30)
    assert task.examples[1].input == "item 1 was great (web)" and task.examples[1].output == "positive"
    assert task.labels == ["negative", "positive"] and task.kind == "classification"
    assert task.template.zero_shot("x") == "Review: x\nSentiment:" and task.template.sep == "\n"
    saved = load_task("hf:toy2")
    assert (len(saved.examples), saved.test_examples[0].input) == (20, "item 200 was awful (web)")
    assert ts.available_specs() == ["toy", "toy2"]


def test_the_test_items_are_drawn_from_the_test_split_by_seed_and_every_demo_trains(specs):
    task = load_task("hf:toy")
    train, test = split(task, 10, seed=3)
    assert train.examples == task.examples and set(test.examples) <= set(task.test_examples)
    assert len(test.examples) == 10 and test.template == task.template
    assert split(task, 10, seed=3)[1] == test and split(task, 10, seed=4)[1] != test


def test_a_large_demonstration_split_is_a_fixed_sample(specs, monkeypatch):
    monkeypatch.setattr(ts, "DEMO_POOL", 7)
    first, again = load_task("hf:toy"), load_task("hf:toy")
    assert len(first.examples) == 7 and first.examples == again.examples
    assert len(first.test_examples) == 30  # the test split is kept whole, for `split` to draw from


@pytest.mark.parametrize("change, code, named", [
    (lambda d: write_jsonl(d / "toy" / "validation.jsonl", [{"text": "x", "label": 0}]), "spec.no_column", "input"),
    (lambda d: write_jsonl(d / "toy" / "validation.jsonl", [{"sentence": "x", "meta": {"source": "a"}}]),
     "spec.no_column", "label"),
    (lambda d: write_jsonl(d / "toy" / "validation.jsonl", [*rows(3), {**rows(1)[0], "label": 7}]),
     "spec.label_outside", "7"),
    (lambda d: (d / "toy" / "validation.jsonl").write_text(""), "spec.no_data", "toy"),
    (lambda d: (d / "toy" / "validation.jsonl").unlink(), "spec.no_split", "validation"),
    (lambda d: (d / "toy" / "train.jsonl").write_text('{"sentence": "unterminated'), "spec.no_data", "train"),
])
def test_data_that_does_not_match_its_spec_is_refused_naming_the_spec_and_the_field(specs, change, code, named):
    change(specs[1])
    with pytest.raises(TaskError) as err:
        load_task("hf:toy")
    assert err.value.code == code and "toy" in str(err.value) and named in str(err.value)


def test_a_spec_without_data_says_where_it_looked(specs):
    with pytest.raises(TaskError) as err:
        load_task("hf:nodata")
    assert err.value.code == "spec.no_data" and str(specs[1] / "nodata") in str(err.value)


@pytest.mark.parametrize("edit, field", [
    (lambda s: s.replace("label: label\n", ""), "label"),
    (lambda s: s.replace("1: positive", "1: negative"), "verbalizer"),
    (lambda s: s.replace("{x}", "{y}"), "template"),
    (lambda s: s + "shots: 4\n", "shots"),
])
def test_a_broken_spec_names_its_field(specs, edit, field):
    path = specs[0] / "toy.yaml"
    path.write_text(edit(path.read_text()))
    with pytest.raises(TaskError) as err:
        load_task("hf:toy")
    assert err.value.code == "spec.bad_field" and f"'{field}'" in str(err.value)


@pytest.mark.parametrize("entry, why", [
    ("{model: M, method: icr, overall: 168, source: s}", "not a mean in points"),
    ("{model: M, method: icr, overall: 68}", "need model, method, overall and source"),
    ("{model: M, method: icr, overall: 68, collapses: -1, source: s}", "not a count"),
    ("icr 68", "needs a list of mappings"),
])
def test_a_groups_reported_numbers_are_checked(specs, entry, why):
    path = specs[2] / "toys.yaml"
    path.write_text(GROUP.split("reported:")[0] + f"reported:\n  - {entry}\n")
    with pytest.raises(TaskError) as err:
        ts.load_group("toys")
    assert err.value.code == "spec.bad_field" and "'reported'" in str(err.value) and why in str(err.value)


def test_unknown_specs_and_groups_list_the_known_ones(specs):
    with pytest.raises(TaskError, match="no task spec 'hf:nope' .*toy, toy2"):
        load_task("hf:nope")
    with pytest.raises(TaskError, match="no task group 'nope' .*toys"):
        ts.load_group("nope")


def test_the_library_builds_and_evaluates_a_spec_task_with_its_prompt(specs, lm):
    few = icl.build("few-shot", lm, "hf:toy", shots=2)
    pred = few.predict(["item 9 was great (web)"])[0]
    assert pred.prompt.startswith("Review: ") and pred.prompt.endswith("Review: item 9 was great (web)\nSentiment:")
    assert set(pred.label_probs) == {"negative", "positive"}
    report = icl.evaluate(lm, "hf:toy", ["zero-shot", "few-shot"], n_test=8, shots=2).to_json()
    assert (report["task"], report["n_test"]) == ("toy", 8)
    assert all(r["error"] is None and r["n"] == 8 for r in report["methods"].values())


def test_eval_takes_a_spec_as_data(specs, tiny_checkpoint, tmp_path):
    out = tmp_path / "r.json"
    assert main(["eval", "--data", "hf:toy", "--methods", "zero-shot", "--n-test", "5", "--shots", "2",
                 "--model", tiny_checkpoint, "--json", str(out)]) == 0
    assert json.loads(out.read_text())["n_test"] == 5


def test_a_group_runs_its_members_reports_its_parts_and_marks_the_missing_one(specs, tiny_checkpoint, tmp_path):
    out = tmp_path / "suite"
    assert main(["suite", "--tasks", "toys", "--methods", "zero-shot,few-shot", "--n-test", "6", "--shots", "2",
                 "--model", tiny_checkpoint, "--out", str(out)]) == 0
    assert {p.stem for p in out.glob("*.json")} == {"toy", "toy2", "settings"}
    summary = (out / "summary.md").read_text()
    assert "| method | seen (1/1) | unseen (1/2) | overall | collapses | failed |" in summary
    assert "- nodata: task spec nodata: no data" in summary
    assert "| toys | Big-7B | zero-shot | 61.5 | - | the test |" in summary  # the paper's numbers, after the table
    assert "| toys | Big-7B | few-shot | 70.5 | 2 | the test |" in summary
    table = {r["method"]: r for r in csv.DictReader((out / "group.csv").open())}
    toy = json.loads((out / "toy.json").read_text())["methods"]["few-shot"]["accuracy"]
    toy2 = json.loads((out / "toy2.json").read_text())["methods"]["few-shot"]["accuracy"]
    assert float(table["few-shot"]["seen"]) == pytest.approx(toy)
    assert float(table["few-shot"]["overall"]) == pytest.approx((toy + toy2) / 2)


def test_two_groups_sharing_a_set_each_get_their_own_overall_and_the_set_counts_once(specs, tiny_checkpoint,
                                                                                       tmp_path):
    """`toys` (toy; toy2, nodata) and `solo` (toy alone): each group's parts, `toys/all` for the group of two
    parts, and the run's overall over the two distinct sets, not toy twice."""
    (specs[2] / "solo.yaml").write_text("name: solo\ntitle: toy alone\nparts:\n  all: [toy]\n")
    out = tmp_path / "suite"
    assert main(["suite", "--tasks", "toys,solo", "--methods", "zero-shot", "--n-test", "6", "--shots", "2",
                 "--model", tiny_checkpoint, "--out", str(out)]) == 0
    assert ("| method | toys/seen (1/1) | toys/unseen (1/2) | toys/all (2/3) | solo/all (1/1) | overall |"
            in (out / "summary.md").read_text())
    row = next(csv.DictReader((out / "group.csv").open()))
    acc = {t: json.loads((out / f"{t}.json").read_text())["methods"]["zero-shot"]["accuracy"] for t in ("toy", "toy2")}
    assert acc["toy"] != acc["toy2"]  # else counting toy twice would not show
    assert float(row["toys/all"]) == pytest.approx((acc["toy"] + acc["toy2"]) / 2)
    assert float(row["overall"]) == pytest.approx((acc["toy"] + acc["toy2"]) / 2)


def test_a_spec_asked_for_by_name_must_have_its_data(specs, tiny_checkpoint, tmp_path, capsys):
    assert main(["suite", "--tasks", "hf:toy,hf:nodata", "--methods", "zero-shot", "--n-test", "4",
                 "--model", tiny_checkpoint, "--out", str(tmp_path / "s")]) == 2
    assert "task spec nodata: no data" in capsys.readouterr().err
