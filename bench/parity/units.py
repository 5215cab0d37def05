"""What every comparison script does with its units: compare each one not compared yet (a finished unit is kept, so
a run resumes), then summarise per task and pooled, print docs/fidelity.md's rows and keep the summary."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from icr_app.core.models import load_model
from icr_app.core.tasks import Task, builtin_task, split


def unit_args(ap: argparse.ArgumentParser, example: str) -> argparse.ArgumentParser:
    """A comparison's arguments: the units (folders handed over under RUN/data), the run folder, the model."""
    ap.add_argument("units", nargs="+", help=f"folders under RUN/data, e.g. {example}")
    ap.add_argument("--run", type=Path, required=True)
    ap.add_argument("--model", default="smollm2-135m")
    return ap


def handover_and_compare(description: str, example: str, tasks: str, n_test: int = 24,
                         ) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    """A comparison that also writes its own hand-over: `handover TASKS` (per task and seed, under RUN/data) and
    `compare UNITS`; more commands can be added to the returned subparsers."""
    ap = argparse.ArgumentParser(description=description)
    sub = ap.add_subparsers(dest="command", required=True)
    h = sub.add_parser("handover", help="write each task's and seed's unit folder, and the checkpoint, under RUN")
    h.add_argument("tasks", nargs="+", help=tasks)
    h.add_argument("--seeds", type=int, nargs="+", default=[0])
    h.add_argument("--n-test", type=int, default=n_test)
    h.add_argument("--run", type=Path, required=True)
    h.add_argument("--model", default="smollm2-135m")
    unit_args(sub.add_parser("compare", help="compare ours with the authors' run on each unit"), example)
    return ap, sub


def handed_split(run: Path, unit: str) -> tuple[dict, Task, Task]:
    """A unit's `split.json` and the (train, test) split of ICL Lab's it records, checked to be the one handed over."""
    data = run / "data" / unit
    meta = json.loads((data / "split.json").read_text())
    train, test = split(builtin_task(meta["task"], kind=meta["kind"]), meta["n_test"], meta["seed"],
                        min_train=meta["min_train"])
    if test.inputs != [r["input"] for r in json.loads((data / "test.json").read_text())]:
        raise SystemExit(f"{unit}: the handed-over test items are not ICL Lab's split any more; rerun handover.py")
    return meta, train, test


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


def compare_and_report(run: Path, folder: str, names: list[str], model: str, compare_unit: Callable[..., dict],
                       describe: Callable[[dict], str], summary: Callable[[list[dict]], dict],
                       row: Callable[[str, dict], str]) -> None:
    """`compare`: each unit compared by `compare_unit(lm, run, unit)` (or read back), then the report."""
    lm = load_model(model)
    units = compared(run, folder, names, lambda unit: compare_unit(lm, run, unit), describe)
    report(run, folder, units, summary, row)


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


def accuracy_cells(method: str, task: str, s: dict, acc: dict, authors: str) -> str:
    """A fidelity row's first cells, the same for every method: the method, the task, the items, zero-shot, ours,
    theirs (`acc[authors]`), the paired p and ours reseeded."""
    return (f"| {method} | {task} | {s['n']} | {acc['zero-shot']:.2f} | {acc['ours']:.2f} | {acc[authors]:.2f} | "
            f"{s['ours vs authors']['p_mcnemar']:.2f} | {acc['ours reseeded']:.2f} | ")


def mean(xs: list[float]) -> float:
    """The mean of the defined values: a constant curve has no rank correlation (nan)."""
    xs = [x for x in xs if x == x]
    return sum(xs) / len(xs) if xs else float("nan")
