"""Every method side by side: one `icl-lab eval` run per task, then one table of accuracy, latency and cost.

    python bench/methods_table.py --out /tmp/methods [--tasks fv,fresh,fresh-2,month-number] \
        [--methods zero-shot,few-shot,site,site@first-token,icr] [--workers 2] [-- --site-steps 40 ...]

Each task runs as `python -m icr_app eval --data TASK --methods METHODS --n-test 100 --seed 0 --json
OUT/TASK.json [extra flags]` (skipped when that JSON exists, so a run resumes); with `--workers 2` two tasks
run at once, each on one thread (timings inside one run stay comparable as ratios, not across runs).
`--table-only` prints the tables from the JSON files already written. Task groups: `fv` (../shared/data/fv),
`fresh`, `fresh-2` (bench/), or a path / built-in name.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from icr_app.methods import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
GROUPS = {"fv": ROOT.parent / "shared" / "data" / "fv", "fresh": ROOT / "bench" / "fresh",
          "fresh-2": ROOT / "bench" / "fresh-2"}
EXTRA = {"month-number": ROOT / "bench" / "tasks" / "month-number.json",
         "company-sector": ROOT / "bench" / "tasks" / "company-sector.json"}
METHODS = ",".join(REGISTRY)  # every registered method, in the registry's order


def task_files(spec: str) -> dict[str, Path]:
    """{name: file} for a comma list of groups, extra task names or paths."""
    out: dict[str, Path] = {}
    for item in filter(None, spec.split(",")):
        if item in GROUPS:
            out.update({f.stem: f for f in sorted(GROUPS[item].glob("*.json"))})
        elif item in EXTRA:
            out[item] = EXTRA[item]
        else:
            out[Path(item).stem] = Path(item)
    return out


def run_task(name: str, data: Path, out: Path, methods: str, extra: list[str], threads: int) -> None:
    dest = out / f"{name}.json"
    if dest.exists():
        return
    cmd = [sys.executable, "-m", "icr_app", "eval", "--data", str(data), "--methods", methods, "--n-test", "100",
           "--seed", "0", "--json", str(dest), *extra]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    with open(out / f"{name}.log", "w") as log:
        # exit status 1 means a method failed; its error is in the JSON, which is what the table reads
        subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=env)


def _cell(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def tables(out: Path, names: list[str], also: list[Path] = ()) -> str:
    """Per task: accuracy (first-token accuracy) of every method; then per method its means, latency ratio to
    zero-shot (within each method's own run), build seconds and stored parameters (medians over tasks), and how
    many tasks it failed. `also`: other output folders whose methods join the same tasks' rows."""
    reports = [json.loads((out / f"{n}.json").read_text()) for n in names if (out / f"{n}.json").exists()]
    for extra in also:  # other runs' methods on the same tasks (same split and seed), joined per task
        for rep in reports:
            path = extra / f"{rep['task']}.json"
            if path.exists():
                for m, res in json.loads(path.read_text())["methods"].items():
                    rep["methods"].setdefault(m, res)
    if not reports:
        return "no results yet"
    methods = list(dict.fromkeys(m for r in reports for m in r["methods"]))
    rows = ["| task | kind | " + " | ".join(methods) + " |", "|---|---|" + "---:|" * len(methods)]
    for rep in reports:
        cells = []
        for m in methods:
            res = rep["methods"].get(m)
            if res is None or res["error"] is not None:
                cells.append("error" if res else "")
            else:
                cells.append(f"{res['accuracy']:.2f} ({res['first_token_accuracy']:.2f})")
        rows.append(f"| {rep['task']} | {rep['kind']} | " + " | ".join(cells) + " |")
    summary = ["| method | tasks | mean exact | mean first-token | latency / zero-shot (median) | build s (median) "
               "| stored params | failed |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for m in methods:
        ok = [r["methods"][m] for r in reports if m in r["methods"] and r["methods"][m]["error"] is None]
        failed = sum(1 for r in reports if m in r["methods"] and r["methods"][m]["error"] is not None)
        if not ok:
            summary.append(f"| {m} | 0 | - | - | - | - | - | {failed} |")
            continue

        def median(key: str, rows: list[dict] = ok) -> float | None:
            vals = sorted(x[key] for x in rows if x[key] is not None)
            return vals[len(vals) // 2] if vals else None

        n = len(ok)
        summary.append(f"| {m} | {n} | {sum(x['accuracy'] for x in ok) / n:.3f} | "
                       f"{sum(x['first_token_accuracy'] for x in ok) / n:.3f} | "
                       f"{_cell(median('latency_ratio_to_zero_shot'), '.2f')} | {_cell(median('build_s'), '.1f')} | "
                       f"{median('stored_parameters'):,} | {failed} |")
    return "\n".join(rows) + "\n\n" + "\n".join(summary)


def main() -> None:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("/tmp/methods-table"))
    p.add_argument("--tasks", default="fv,fresh,fresh-2", help="groups (fv, fresh, fresh-2), task names or paths")
    p.add_argument("--methods", default=METHODS)
    p.add_argument("--workers", type=int, default=1, help="tasks run at once, each its own process")
    p.add_argument("--threads", type=int, default=0,
                   help="torch threads per task (default: the cores shared among the workers)")
    p.add_argument("--table-only", action="store_true")
    p.add_argument("--join", type=Path, action="append", default=[],
                   help="another run's output folder: its methods join the table's rows for the same tasks")
    args = p.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    files = task_files(args.tasks)
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.table_only:
        threads = args.threads or max(1, (os.cpu_count() or 1) // args.workers)
        with ThreadPoolExecutor(args.workers) as pool:
            list(pool.map(lambda kv: run_task(*kv, args.out, args.methods, extra, threads), files.items()))
    print(tables(args.out, list(files), args.join))


if __name__ == "__main__":
    main()
