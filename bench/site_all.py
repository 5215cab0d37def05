"""SITE benchmark: the `eval` CLI on the ten FV tasks, then one table of accuracy and latency ratios.

    python bench/site_all.py --out /tmp/site-bench [--tasks sentiment,antonym] [--workers 2]

Each task runs as `python -m icr_app eval --data DATA/TASK.json --methods zero-shot,few-shot,site
--n-test 100 --seed 0 --json OUT/TASK.json` (skipped when that JSON exists, so the run resumes);
`--table-only` prints the Markdown table from the JSON files already written.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "fv"
METHODS = ("zero-shot", "few-shot", "site")


def run_task(task: str, out: Path) -> None:
    dest = out / f"{task}.json"
    if dest.exists():
        return
    cmd = [sys.executable, "-m", "icr_app", "eval", "--data", str(DATA / f"{task}.json"), "--methods",
           ",".join(METHODS), "--n-test", "100", "--seed", "0", "--json", str(dest)]
    with open(out / f"{task}.log", "w") as log:
        subprocess.run(cmd, check=True, stdout=log, stderr=subprocess.STDOUT, cwd=Path(__file__).parents[1])


def table(out: Path, tasks: list[str]) -> str:
    rows = ["| task | kind | zero-shot | 10-shot | SITE | SITE build (s) | SITE / zero-shot latency | "
            "SITE / 10-shot latency |", "|---|---|---|---|---|---|---|---|"]
    acc: dict[str, list[float]] = {m: [] for m in METHODS}
    for task in tasks:
        path = out / f"{task}.json"
        if not path.exists():
            continue
        rep = json.loads(path.read_text())
        res = rep["methods"]
        for m in METHODS:
            acc[m].append(res[m]["accuracy"])
        site, zs, fs = res["site"], res["zero-shot"], res["few-shot"]
        rows.append(f"| {task} | {rep['kind']} | {zs['accuracy']:.2f} | {fs['accuracy']:.2f} | "
                    f"{site['accuracy']:.2f} | {site['build_s']:.0f} | {site['latency_s'] / zs['latency_s']:.2f} | "
                    f"{site['latency_s'] / fs['latency_s']:.2f} |")
    n = len(acc["site"])
    if n:
        rows.append(f"| **mean ({n} tasks)** | | {sum(acc['zero-shot']) / n:.3f} | {sum(acc['few-shot']) / n:.3f} | "
                    f"{sum(acc['site']) / n:.3f} | | | |")
    return "\n".join(rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("/tmp/site-bench"))
    p.add_argument("--tasks", default=",".join(sorted(f.stem for f in DATA.glob("*.json"))))
    p.add_argument("--workers", type=int, default=1, help="tasks run at once (each its own process)")
    p.add_argument("--table-only", action="store_true")
    args = p.parse_args()
    tasks = [t for t in args.tasks.split(",") if t]
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.table_only:
        with ThreadPoolExecutor(args.workers) as pool:
            list(pool.map(lambda t: run_task(t, args.out), tasks))
    print(table(args.out, tasks))


if __name__ == "__main__":
    main()
