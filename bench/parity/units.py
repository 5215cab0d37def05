"""What every comparison script does with its units: compare each one not compared yet (a finished unit is kept, so
a run resumes), then summarise per task and pooled, print docs/fidelity.md's rows and keep the summary."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def compared(run: Path, folder: str, names: list[str], compare: Callable[[str], dict],
             describe: Callable[[dict], str], file: str = "compare.json") -> list[dict]:
    """Each unit's comparison, read from `run/folder/<unit>/file`, made by `compare(unit)` when missing."""
    units = []
    for name in names:
        path = run / folder / name / file
        if not path.is_file():
            path.write_text(json.dumps(compare(name), indent=1))
        units.append(json.loads(path.read_text()))
        print(f"{name}: {describe(units[-1])}")
    return units


def by_task(units: list[dict]) -> dict[str, list[dict]]:
    return {task: [u for u in units if u["task"] == task] for task in sorted({u["task"] for u in units})}


def report(run: Path, folder: str, units: list[dict], summary: Callable[[list[dict]], dict],
           row: Callable[[str, dict], str], file: str = "summary.json") -> dict:
    """`summary` of each task's units and of all of them, printed with their table rows and written to `file`."""
    out = {task: summary(us) for task, us in by_task(units).items()} | {"all": summary(units)}
    print(json.dumps(out, indent=1))
    print("\n".join(row(task, s) for task, s in out.items()))
    (run / folder / file).write_text(json.dumps(out, indent=1))
    return out


def mean(xs: list[float]) -> float:
    """The mean of the defined values: a constant curve has no rank correlation (nan)."""
    xs = [x for x in xs if x == x]
    return sum(xs) / len(xs) if xs else float("nan")
