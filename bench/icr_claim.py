"""ICR's central claim, per model: a router trained once lifts tasks it never saw. Read from `icl-lab suite` folders
that ran zero-shot, few-shot (10-shot) and icr, and set beside what 10-shot ICL gains on the same tasks.

    PYTHONPATH=. python bench/icr_claim.py \
        --model smollm2-135m icr_app/assets/icr/smollm2-135m /tmp/suite-fv,/tmp/suite-fresh,/tmp/suite-fresh-2 \
        --model gemma3-270m icr_app/assets/icr/gemma3-270m /tmp/g-fv,/tmp/g-fresh,/tmp/g-fresh-2

Tasks fall in three groups: those the router trained on (its PIDs' metadata names them), the `bench/fresh` and
`bench/fresh-2` tasks (written after every recipe choice, never trained or chosen on) and any other task (listed
apart: some were used to choose among routers). Per group: mean accuracies, ICR's and 10-shot's gains over
zero-shot in points, their ratio (how much of what the demonstrations give the router carries without them),
collapses (tasks where icr is below zero-shot; in brackets those the task's paired McNemar test finds
significant) and ICR against zero-shot on the group's pooled items (difference [95% interval], McNemar p).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from icr_app.core.artefacts import load_artefact
from icr_app.methods.icr.router import FILE, RouterState
from icr_app.stats import paired, significant
from icr_app.suite_report import vs_base

FRESH = {p.stem for group in ("fresh", "fresh-2") for p in (Path(__file__).parent / group).glob("*.json")}
METHODS = ("zero-shot", "few-shot", "icr")


def trained_on(router: Path) -> set[str]:
    """The task names the router's PIDs were extracted from (and it was trained on)."""
    return set(load_artefact(router / FILE, RouterState.KIND).meta["pids"]["domains"])


def read_reports(folders: list[Path]) -> dict[str, dict]:
    """Every task JSON of the suite folders, by task name; each must hold the three methods, served."""
    reports = {}
    for folder in folders:
        for path in sorted(folder.glob("*.json")):
            if path.name == "settings.json":
                continue
            rep = json.loads(path.read_text())
            missing = [m for m in METHODS if rep["methods"].get(m, {"error": "not run"})["error"] is not None]
            if missing:
                raise SystemExit(f"{path}: {', '.join(missing)} did not run or failed; the claim needs "
                                 f"{', '.join(METHODS)}")
            reports[rep["task"]] = rep
    return reports


def group_row(reports: list[dict]) -> dict:
    """One group's means, gains, ratio, collapses and pooled ICR − zero-shot."""
    mean = {m: statistics.fmean(r["methods"][m]["accuracy"] for r in reports) for m in METHODS}
    against = [vs_base(r, "icr") for r in reports]
    below = [c for c in against if c["diff"] < 0]
    items = {m: [c for r in reports for c in r["methods"][m]["correct"]] for m in ("icr", "zero-shot")}
    icr_gain, shots_gain = mean["icr"] - mean["zero-shot"], mean["few-shot"] - mean["zero-shot"]
    return {"tasks": len(reports), **mean, "icr_gain": icr_gain, "few_shot_gain": shots_gain,
            "ratio": icr_gain / shots_gain if shots_gain > 0 else None, "collapses": len(below),
            "significant_collapses": sum(map(significant, below)),
            "pooled": paired(items["icr"], items["zero-shot"]), "n": len(items["icr"])}


def rows(name: str, router: Path, folders: list[Path]) -> list[str]:
    reports = read_reports(folders)
    domains = trained_on(router)
    groups = {"trained on": [t for t in reports if t in domains], "bench/fresh*": [t for t in reports if t in FRESH],
              "other unseen": [t for t in reports if t not in domains and t not in FRESH]}
    out = []
    for group, tasks in groups.items():
        if not tasks:
            continue
        r = group_row([reports[t] for t in tasks])
        p = r["pooled"]
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        out.append(f"| {name} | {group} ({', '.join(sorted(tasks))}) | {r['tasks']} | {r['zero-shot']:.3f} | "
                   f"{r['few-shot']:.3f} | {r['icr']:.3f} | {100 * r['few_shot_gain']:+.1f} | "
                   f"{100 * r['icr_gain']:+.1f} | "
                   f"{ratio} | {r['collapses']} ({r['significant_collapses']}) | {100 * p['diff']:+.1f} "
                   f"[{100 * p['ci95'][0]:+.1f}, {100 * p['ci95'][1]:+.1f}], p {p['p_mcnemar']:.2g}, {r['n']} items |")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", nargs=3, action="append", required=True, metavar=("NAME", "ROUTER_DIR", "SUITE_DIRS"),
                   help="a model's name, its router folder and its suite folders (comma-separated)")
    args = p.parse_args()
    print("| model | tasks | n | zero-shot | 10-shot | icr | 10-shot gain (pts) | icr gain (pts) | icr / 10-shot gain "
          "| collapses (significant) | icr − zero-shot, pooled |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, router, dirs in args.model:
        print("\n".join(rows(name, Path(router), [Path(d) for d in dirs.split(",")])))


if __name__ == "__main__":
    main()
