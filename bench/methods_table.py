"""Every method side by side on the benchmark's task groups: `icl-lab suite` with the groups spelled out.

    PYTHONPATH=. python bench/methods_table.py --out /tmp/methods [--tasks fv,fresh,fresh-2,month-number] \
        [any other `icl-lab suite` flag: --methods, --seeds, --n-test, --model, --site-steps 40, ...]
    PYTHONPATH=. accelerate launch --multi_gpu --num_processes 2 bench/methods_table.py --out /tmp/methods ...

Task groups: `fv` ($ICL_LAB_DATA/fv, which `icl-lab data fetch fv` brings), `fresh`, `fresh-2` (bench/), the
single tasks `month-number` and `company-sector` (bench/tasks/), or anything the suite takes (built-in names, task
files, folders). Defaults: every registered method, seeds 0,1,2, 100 test items. Rerun with the same --out to resume
or to redraw the summary.
Until 2026-12-02 this script ran one `eval` per task with seed 0 (the commands in BENCHMARKS.md's older
sections; that version is in git history).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from icr_app.cli import main as cli
from icr_app.core.datafetch import DataError, require_fv
from icr_app.methods import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
GROUPS = {"fresh": ROOT / "bench" / "fresh", "fresh-2": ROOT / "bench" / "fresh-2",
          "month-number": ROOT / "bench" / "tasks" / "month-number.json",
          "company-sector": ROOT / "bench" / "tasks" / "company-sector.json"}
METHODS = ",".join(REGISTRY)  # every registered method, in the registry's order


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    p.add_argument("--tasks", default="fv,fresh,fresh-2")
    known, rest = p.parse_known_args()
    try:
        groups = {**GROUPS, "fv": require_fv()} if "fv" in known.tasks.split(",") else GROUPS
    except DataError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    tasks = ",".join(str(groups.get(t, t)) for t in known.tasks.split(","))
    # the suite's own flags come after these defaults, so a flag given here wins
    return cli(["suite", "--tasks", tasks, "--methods", METHODS, "--seeds", "0,1,2", *rest])


if __name__ == "__main__":
    sys.exit(main())
