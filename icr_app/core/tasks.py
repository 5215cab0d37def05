"""Tasks: labelled (input, output) examples read from user files or the built-in tasks, validated.

The built-in tasks are JSON files shipped as package data (`icr_app/assets/tasks/`), written by the project.

Every rejection is a `TaskError` whose message says what is wrong and where, so the CLI and the
app can show it as is. Demonstrations for a few-shot prompt are drawn here too (`sample_demos`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from icr_app.core import taskspecs
from icr_app.core.errors import TaskError
from icr_app.core.paths import ASSETS
from icr_app.core.prompts import Template

MAX_BYTES = 10 * 1024 * 1024
MAX_ROWS = 50_000
INPUT_COLUMNS = ("input", "text", "sentence", "question", "x")
OUTPUT_COLUMNS = ("output", "label", "answer", "target", "y")
# A task is classification-style when it has at most this many distinct outputs, each seen ~4+ times.
MAX_CLASSES = 32

TaskKind = Literal["classification", "open"]


@dataclass(frozen=True)
class Example:
    input: str
    output: str


@dataclass(frozen=True)
class Task:
    """Labelled examples. A task from a dataset with a test split of its own (`icr_app.core.taskspecs`) keeps
    that split in `test_examples`, scored instead of a part of `examples`, and may bring its own prompt."""

    name: str
    examples: tuple[Example, ...]
    kind: TaskKind
    test_examples: tuple[Example, ...] = ()
    template: Template | None = None

    def prompt(self, template: Template | None = None) -> Template:
        """The prompt the task is asked in: `template` when one is given, else its own, else the default."""
        return template or self.template or Template()

    @property
    def labels(self) -> list[str]:
        """Distinct outputs in order of first appearance (the label set of a classification task)."""
        return list(dict.fromkeys(e.output for e in self.examples))

    @property
    def inputs(self) -> list[str]:
        return [e.input for e in self.examples]

    @property
    def outputs(self) -> list[str]:
        return [e.output for e in self.examples]

    def subset(self, idx: list[int], name: str | None = None) -> Task:
        return Task(name or self.name, tuple(self.examples[i] for i in idx), self.kind, template=self.template)


def infer_kind(outputs: list[str]) -> TaskKind:
    n_distinct = len(set(outputs))
    if n_distinct <= MAX_CLASSES and n_distinct * 4 <= len(outputs):
        return "classification"
    return "open"


def make_task(
    name: str, pairs: list[tuple[str, str]], kind: TaskKind | Literal["auto"] = "auto"
) -> Task:
    """Validate (input, output) pairs and build a Task. Raises TaskError naming the bad rows."""
    if not pairs:
        raise TaskError("task.empty", file=name)
    if len(pairs) > MAX_ROWS:
        raise TaskError("task.too_many_rows", file=name, n=len(pairs), max=MAX_ROWS)
    cleaned, blank = [], []
    for i, (x, y) in enumerate(pairs, start=1):
        x, y = ("" if x is None else str(x)).strip(), ("" if y is None else str(y)).strip()
        if not x or not y:
            blank.append(i)
        cleaned.append(Example(x, y))
    if blank:
        shown = ", ".join(map(str, blank[:10])) + (" ..." if len(blank) > 10 else "")
        raise TaskError("task.blank_rows", file=name, n=len(blank), rows=shown)
    if len(cleaned) < 2:
        raise TaskError("task.too_few", file=name, n=len(cleaned))
    resolved: TaskKind = infer_kind([e.output for e in cleaned]) if kind == "auto" else kind
    task = Task(name, tuple(cleaned), resolved)
    if resolved == "classification" and len(task.labels) < 2:
        raise TaskError("task.one_label", file=name, label=task.labels[0])
    return task


def _pick_column(columns: list[str], wanted: str | None, candidates: tuple[str, ...], role: str) -> str:
    lower = {c.strip().lower(): c for c in columns}
    if wanted is not None:
        if wanted in columns:
            return wanted
        if wanted.lower() in lower:
            return lower[wanted.lower()]
        raise TaskError("task.no_such_column", role=role, want=wanted, columns=", ".join(columns))
    for c in candidates:
        if c in lower:
            return lower[c]
    raise TaskError("task.no_column", role=role, names=", ".join(candidates), columns=", ".join(columns))


def _rows_from_records(records: list, input_col: str | None, output_col: str | None) -> list[tuple]:
    if not all(isinstance(r, dict) for r in records):
        raise TaskError("task.not_records")
    columns = list(dict.fromkeys(k for r in records for k in r))
    xi = _pick_column(columns, input_col, INPUT_COLUMNS, "input")
    yi = _pick_column(columns, output_col, OUTPUT_COLUMNS, "output")
    return [(r.get(xi), r.get(yi)) for r in records]


def parse_task_bytes(
    data: bytes,
    filename: str,
    input_col: str | None = None,
    output_col: str | None = None,
    kind: TaskKind | Literal["auto"] = "auto",
) -> Task:
    """Parse CSV, TSV, JSON (a list of records) or JSONL by file extension."""
    name = Path(filename).stem
    if len(data) > MAX_BYTES:
        raise TaskError("task.too_big", file=filename, mb=len(data) / 1e6, max=MAX_BYTES // 2**20)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise TaskError("task.not_utf8", file=filename, byte=err.start) from None
    if not text.strip():
        raise TaskError("task.empty_file", file=filename)
    ext = Path(filename).suffix.lower()
    if ext in (".csv", ".tsv"):
        reader = csv.DictReader(io.StringIO(text), delimiter="\t" if ext == ".tsv" else ",")
        try:
            records = list(reader)
        except csv.Error as err:
            raise TaskError("task.malformed_table", file=filename, format=ext[1:].upper(), err=str(err)) from None
        if reader.fieldnames is None:
            raise TaskError("task.no_header", file=filename)
        if any(None in r for r in records):
            raise TaskError("task.extra_fields", file=filename)
    elif ext == ".json":
        try:
            records = json.loads(text)
        except json.JSONDecodeError as err:
            raise TaskError("task.malformed_json", file=filename, line=err.lineno, err=err.msg) from None
        if not isinstance(records, list):
            raise TaskError("task.not_a_list", file=filename)
    elif ext == ".jsonl":
        records = []
        for i, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as err:
                    raise TaskError("task.malformed_jsonl", file=filename, line=i, err=err.msg) from None
    else:
        raise TaskError("task.file_type", file=filename, ext=ext)
    if not records:
        raise TaskError("task.no_records", file=filename)
    return make_task(name, _rows_from_records(records, input_col, output_col), kind)


BUILTIN_DIR = ASSETS / "tasks"
DEFAULT_TASK = "sentiment"
HF_PREFIX = "hf:"  # a task described by a dataset spec (`icr_app.core.taskspecs`): hf:NAME


def builtin_names() -> list[str]:
    """The built-in tasks, the default first."""
    names = sorted(p.stem for p in BUILTIN_DIR.glob("*.json"))
    return [DEFAULT_TASK] + [n for n in names if n != DEFAULT_TASK]


def load_task(
    path: str | Path,
    input_col: str | None = None,
    output_col: str | None = None,
    kind: TaskKind | Literal["auto"] = "auto",
) -> Task:
    """Load a task from a file path, a built-in demo name or a dataset's spec (`hf:NAME`)."""
    if str(path).startswith(HF_PREFIX):
        return spec_task(str(path).removeprefix(HF_PREFIX))
    if str(path) in builtin_names():
        return builtin_task(str(path), kind)
    p = Path(path)
    if not p.is_file():
        raise TaskError("task.no_such_file", file=str(path), names=", ".join(builtin_names()))
    if p.stat().st_size > MAX_BYTES:
        raise TaskError("task.too_big", file=p.name, mb=p.stat().st_size / 1e6, max=MAX_BYTES // 2**20)
    return parse_task_bytes(p.read_bytes(), p.name, input_col, output_col, kind)


def spec_task(name: str) -> Task:
    """The task `hf:name` (`taskspecs`): examples from the demonstration split, the test split kept apart for
    `split` to draw from, and the spec's prompt."""
    spec = taskspecs.load_spec(name)
    demos, test = (tuple(Example(x, y) for x, y in pairs) for pairs in taskspecs.read_pairs(spec))
    return Task(spec.name, demos, "classification", test_examples=test, template=spec.template)


def builtin_task(name: str, kind: TaskKind | Literal["auto"] = "auto") -> Task:
    path = BUILTIN_DIR / f"{name}.json"
    if not path.is_file():
        raise TaskError("task.no_builtin", name=name, names=", ".join(builtin_names()))
    return parse_task_bytes(path.read_bytes(), path.name, kind=kind)


def split(task: Task, n_test: int, seed: int = 0, min_train: int = 2) -> tuple[Task, Task]:
    """Seeded shuffle into (train, test); the test split gets at most len - min_train examples. A task with a
    test split of its own keeps every example for training and draws n_test of its test items by the seed."""
    if task.test_examples:
        rng = random.Random(seed)
        picked = rng.sample(task.test_examples, min(n_test, len(task.test_examples)))
        return (Task(f"{task.name}/train", task.examples, task.kind, template=task.template),
                Task(f"{task.name}/test", tuple(picked), task.kind, template=task.template))
    idx = list(range(len(task.examples)))
    random.Random(seed).shuffle(idx)
    n_test = max(1, min(n_test, len(idx) - min_train))
    return task.subset(idx[n_test:], f"{task.name}/train"), task.subset(idx[:n_test], f"{task.name}/test")



def item_keys(task: Task) -> list[str]:
    """A short stable name per example, from its text: the same item drawn by two seeds' splits gets one name,
    so pooled tests can count it once (`stats.paired`)."""
    return [hashlib.sha1(json.dumps([e.input, e.output]).encode()).hexdigest()[:16] for e in task.examples]


def sample_demos(
    train: Task, k: int, rng: random.Random, exclude_input: str | None = None
) -> list[Example]:
    """k demonstrations, class-balanced for classification (round-robin over labels), shuffled."""
    pool = [e for e in train.examples if e.input != exclude_input]
    k = min(k, len(pool))
    if train.kind != "classification":
        return rng.sample(pool, k)
    by_label: dict[str, list[Example]] = defaultdict(list)
    for e in pool:
        by_label[e.output].append(e)
    for exs in by_label.values():
        rng.shuffle(exs)
    labels = list(by_label)
    rng.shuffle(labels)
    picked: list[Example] = []
    while len(picked) < k:
        for lab in labels:
            if by_label[lab] and len(picked) < k:
                picked.append(by_label[lab].pop())
    rng.shuffle(picked)
    return picked


def sample_icl_prompts(task: Task, template: Template, n_prompts: int, n_demos: int, seed: int) -> list[str]:
    """n_prompts few-shot prompts, each n_demos demonstrations plus a query, all drawn from the task."""
    rng = random.Random(seed)
    prompts = []
    for _ in range(n_prompts):
        query = rng.choice(task.examples)
        prompts.append(template.few_shot(sample_demos(task, n_demos, rng, exclude_input=query.input), query.input))
    return prompts
