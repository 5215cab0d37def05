"""Task files: every format parses, every bad input gets a message that says what is wrong."""

import json
from collections import Counter
from pathlib import Path

import pytest
from helpers import BAD_UPLOADS, ROWS, csv_bytes

from icr_app.core.tasks import (
    MAX_BYTES,
    TaskError,
    builtin_names,
    builtin_task,
    load_task,
    make_task,
    parse_task_bytes,
    split,
)
from icr_app.methods.icr.router import TRAINING_DOMAINS


@pytest.mark.parametrize(
    "name,data",
    [
        ("t.csv", csv_bytes(ROWS)),
        ("t.tsv", csv_bytes(ROWS, "input\toutput", "\t")),
        ("t.json", json.dumps([{"input": x, "output": y} for x, y in ROWS]).encode()),
        ("t.jsonl", "\n".join(json.dumps({"input": x, "output": y}) for x, y in ROWS).encode()),
        ("t.csv", csv_bytes(ROWS, "text,label")),
        ("t.csv", csv_bytes(ROWS, "Sentence,Label")),
    ],
)
def test_formats_parse(name, data):
    task = parse_task_bytes(data, name)
    assert task.inputs[:2] == ["good film", "dull plot"]
    assert task.labels == ["positive", "negative"]
    assert task.kind == "classification"


def test_configurable_columns():
    data = csv_bytes(ROWS, "review,stars")
    task = parse_task_bytes(data, "t.csv", input_col="review", output_col="stars")
    assert len(task.examples) == 10
    with pytest.raises(TaskError, match="no input column 'body'"):
        parse_task_bytes(data, "t.csv", input_col="body", output_col="stars")


@pytest.mark.parametrize("name,data,message", BAD_UPLOADS)
def test_bad_inputs_have_clear_messages(name, data, message):
    with pytest.raises(TaskError, match=message):
        parse_task_bytes(data, name)


def test_size_cap():
    big = b"input,output\n" + b"x,y\n" * (MAX_BYTES // 4 + 1)
    with pytest.raises(TaskError, match="over the 10 MB limit"):
        parse_task_bytes(big, "big.csv")


def test_row_cap():
    with pytest.raises(TaskError, match="over the limit of 50000"):
        make_task("t", [("a", "b")] * 50_001)


def test_one_label_is_fine_for_open_tasks():
    task = make_task("t", [(f"x{i}", "same") for i in range(10)], kind="open")
    assert task.kind == "open"


def test_missing_file_lists_builtins(tmp_path):
    with pytest.raises(TaskError, match="no such file.*sentiment"):
        load_task(tmp_path / "nope.csv")


@pytest.mark.needs_data("fv")
def test_fv_file_loads(fv_data):
    task = load_task(fv_data / "sentiment.json")
    assert task.kind == "classification" and set(task.labels) == {"positive", "negative"}
    assert load_task(fv_data / "antonym.json").kind == "open"


def test_builtin_tasks_are_big_enough():
    assert builtin_names()[0] == "sentiment" and len(builtin_names()) == 20
    for name in builtin_names():
        task = builtin_task(name)
        assert len(task.examples) >= 40, name
        assert len(set(task.inputs)) == len(task.inputs), name


BENCH = Path(__file__).parents[1] / "bench"
DOMAIN_FILES = sorted(TRAINING_DOMAINS.glob("*.json")) + sorted((BENCH / "domains").glob("*.json"))
PROJECT_WRITTEN = ([(p, 300) for p in DOMAIN_FILES] + [(p, 60) for p in sorted((BENCH / "fresh").glob("*.json"))]
                   + [(p, 120) for p in sorted((BENCH / "fresh-2").glob("*.json"))])


@pytest.mark.parametrize("path, size", PROJECT_WRITTEN, ids=[p.stem for p, _ in PROJECT_WRITTEN])
def test_project_written_icr_sets_are_balanced_classification(path, size):
    """ICR training domains (shipped, and router H's in bench/domains) and the fresh unseen tasks in bench/fresh
    and bench/fresh-2: their size, no repeated input, every label equally often."""
    task = load_task(path)
    counts = Counter(task.outputs)
    assert task.kind == "classification" and len(task.examples) == size
    assert len({x.lower() for x in task.inputs}) == len(task.inputs)
    assert len(set(counts.values())) == 1, counts


def test_split_is_seeded_and_disjoint():
    task = builtin_task("sentiment")
    tr1, te1 = split(task, 10, seed=3)
    tr2, te2 = split(task, 10, seed=3)
    _, te3 = split(task, 10, seed=4)
    assert te1 == te2 and te1 != te3
    assert len(te1.examples) == 10 and len(tr1.examples) == len(task.examples) - 10
    assert not set(tr1.inputs) & set(te1.inputs)
    assert tr1.kind == task.kind
