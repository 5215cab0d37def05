"""BENCHMARKS.md holds only what was measured, and stays a page read in a minute.

Each headline cell is one of three things: drawn from suite units kept in `bench/results/` (its letter names the
folder), and then drawn again here from those units by the suite's own code to the printed digits; a number from an
earlier run whose units were not kept (†), and then the number the full record (docs/notebook/benchmarks-record.md)
wrote for that method and group, character for character; or "—", not measured. No model runs: a unit holds every
test item's answer.
"""

import functools
import itertools
import json
import re
from pathlib import Path

from icr_app.evaluation import EvalReport, MethodResult, SeedsReport
from icr_app.suite_report import group_rows, pooled_rows
from icr_app.suite_run import group_parts

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "BENCHMARKS.md"
RECORD = ROOT / "docs" / "notebook" / "benchmarks-record.md"
MAX_LINES = 250
METHODS = {"zero-shot": "zero-shot", "10-shot": "few-shot", "SITE": "site", "ICR": "icr", "task vector": "task-vector",
           "function vector": "function-vector", "I2CL": "i2cl", "ICV": "icv", "ELICIT": "elicit",
           "learned task vector": "learned-task-vector", "LoRA": "lora", "iterative vector": "iterative-vector",
           "state vector": "state-vector", "ATV": "atv"}
MODELS = {"SmolLM2-135M": "smollm2-135m", "Gemma-3-270M": "gemma3-270m"}
GROUPS = ["`bench/fresh-2`", "fv", "`icr-paper`", "`i2cl-paper`"]
PAPER_GROUPS = {"`icr-paper`": "icr-paper/all", "`i2cl-paper`": "i2cl-paper/all"}
SEEDS = [0, 1, 2]
EMPTY = "—"
CELL = re.compile(r"(?P<value>\d\.\d{3}(?: \[\d\.\d{3}, \d\.\d{3}\])?) (?P<mark>[A-Z]|†)")
# where the record wrote each group's row for a method whose units were not kept: its section, and the column
PAPERS_DEFAULT = "## Every method on the seed papers' groups (`icr-paper`, `i2cl-paper`): default model"
RECORD_COLUMNS = {
    ("smollm2-135m", "`bench/fresh-2`"): ("## Methods on tasks written after every choice", "pooled accuracy"),
    ("smollm2-135m", "fv"): ("## Methods on the ten Function Vectors tasks", "pooled accuracy"),
    ("smollm2-135m", "`icr-paper`"): (PAPERS_DEFAULT, "`icr-paper` (12)"),
    ("smollm2-135m", "`i2cl-paper`"): (PAPERS_DEFAULT, "`i2cl-paper` (9)"),
}


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _table(section: str) -> list[list[str]]:
    """The first Markdown table in `section`: its head, then its rows (the delimiter row left out)."""
    lines = section.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = [_cells(line) for line in itertools.takewhile(lambda line: line.startswith("|"), lines[start:])]
    return [rows[0], *rows[2:]]


def _section(text: str, heading: str) -> str:
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


def headline() -> tuple[list[tuple[str, str]], dict[str, list[str]], dict[str, str]]:
    """The headline's columns as (model, group), its cells per method, and its sources: letter -> units folder."""
    section = _section(PAGE.read_text(), "## Headline")
    head, *rows = _table(section)
    columns, model = [], None
    for title in head[1:]:
        if ": " in title:  # a model's first column names it; the next ones are its too
            model, title = title.split(": ", 1)
        columns.append((MODELS[model], title))
    sources = dict(re.findall(r"\*\*([A-Z])\*\* `(bench/results/[^`]+)`", section))
    return columns, {row[0]: row[1:] for row in rows}, sources


@functools.cache
def reports(folder: str) -> dict[str, dict]:
    """Each task's report over its seeds, as the suite draws OUT/TASK.json from the units (`suite_run.task_report`;
    the check of the units' items against the task's data is left out: the paper sets' data is not in the
    repository, and the suite made that check when it wrote these units)."""
    out = {}
    for task in sorted(p.name for p in (ROOT / folder / "units").iterdir()):
        runs = []
        for seed in SEEDS:
            recs = [json.loads(p.read_text()) for p in
                    sorted((ROOT / folder / "units" / task / f"seed{seed}").glob("*.json"))]
            head = recs[0]
            runs.append(EvalReport(task, head["model"], head["n_test"], seed, head["kind"],
                                   {r["method"]: MethodResult(**r["result"]) for r in recs}, items=head["items"]))
        out[task] = SeedsReport(runs).to_json()
    return out


def group_tasks(group: str, found: list[str]) -> list[str]:
    if group in PAPER_GROUPS:
        return group_parts(["icr-paper", "i2cl-paper"])[PAPER_GROUPS[group]]
    if group == "`bench/fresh-2`":
        return sorted(p.stem for p in (ROOT / "bench" / "fresh-2").glob("*.json"))
    assert len(found) == 10, found  # fv: its ten tasks live outside the repository, so the folder names them
    return found


def drawn(folder: str, group: str, method: str) -> str:
    """A group's cell as the suite summarises it: pooled accuracy [Wilson] for `bench/fresh-2` and fv; for a paper
    group, the mean over its sets (the suite's group table) [the Wilson interval of its pooled items]."""
    every = reports(folder)
    tasks = group_tasks(group, list(every))
    reps = {t: every[t] for t in tasks}
    assert all(method in rep["methods"] for rep in reps.values()), f"{folder} lacks {method} on some of {group}"
    pooled = pooled_rows(reps, [method])[0][0]
    value = group_rows(reps, [method], {group: tasks})[0][group] if group in PAPER_GROUPS else pooled["accuracy"]
    return f"{value:.3f} [{pooled['ci95_low']:.3f}, {pooled['ci95_high']:.3f}]"


def recorded(model: str, group: str, label: str) -> str:
    """What the record's table wrote for `label` in the column where `group`'s number was."""
    heading, column = RECORD_COLUMNS[model, group]
    head, *rows = _table(_section(RECORD.read_text(), heading))
    return next(row for row in rows if row[0] == label)[head.index(column)]


def test_page_is_at_most_250_lines():
    lines = len(PAGE.read_text().splitlines())
    assert lines <= MAX_LINES, f"BENCHMARKS.md has {lines} lines; move detail to docs/notebook/"


def test_headline_is_every_method_by_every_group_and_model():
    columns, rows, _ = headline()
    assert columns == [(model, group) for model in MODELS.values() for group in GROUPS]
    assert list(rows) == list(METHODS)


def test_every_cell_is_cited_marked_as_not_kept_or_empty():
    columns, rows, sources = headline()
    bad = []
    for label, cells in rows.items():
        for (model, group), cell in zip(columns, cells):
            m = CELL.fullmatch(cell)
            if cell == EMPTY or (m and m["mark"] == "†"):
                continue
            if not m or m["mark"] not in sources or "[" not in cell:
                bad.append(f"{label}, {model} {group}: {cell!r}")
            elif json.loads((ROOT / sources[m["mark"]] / "settings.json").read_text())["model"] != model:
                bad.append(f"{label}, {model} {group}: {sources[m['mark']]} holds another model's units")
    assert not bad, "\n".join(bad)


def test_cited_cells_are_drawn_again_from_their_units():
    columns, rows, sources = headline()
    wrong = []
    for label, cells in rows.items():
        for (model, group), cell in zip(columns, cells):
            m = CELL.fullmatch(cell)
            if m and m["mark"] in sources:
                again = drawn(sources[m["mark"]], group, METHODS[label])
                if again != m["value"]:
                    wrong.append(f"{label}, {model} {group}: the page {m['value']}, the units {again}")
    assert not wrong, "\n".join(wrong)


def test_cells_not_kept_are_the_numbers_the_record_wrote():
    columns, rows, _ = headline()
    wrong = []
    for label, cells in rows.items():
        for (model, group), cell in zip(columns, cells):
            m = CELL.fullmatch(cell)
            if m and m["mark"] == "†" and recorded(model, group, label) != m["value"]:
                wrong.append(f"{label}, {model} {group}: the page {m['value']}, the record "
                             f"{recorded(model, group, label)}")
    assert not wrong, "\n".join(wrong)
