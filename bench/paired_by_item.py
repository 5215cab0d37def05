"""The suite's pooled comparisons again, with each distinct test item as one unit instead of each item-seed pair.

    ICL_LAB_DATA=DATA PYTHONPATH=. python bench/paired_by_item.py --out OUT --tasks icr-paper,i2cl-paper \
        --seeds 0,1 --pairs site:lora,lora:learned-task-vector,icv:task-vector

The suite pools every task's and seed's items and runs one exact McNemar test per pair of methods
(`icr_app.stats.paired`). A set whose test split is no larger than --n-test (CB, COPA, DBpedia) gives the same
items to every seed, and two seeds' draws from a larger split overlap, so that pooled test counts a repeated item
as new evidence. Here each distinct item's differences are summed over the seeds and the sums are tested by sign
flips (scipy's paired permutation test), which holds however many times an item was drawn. It reads the suite's
units only; the item behind each unit's `correct` entries is found again with `core.tasks.split`, and zero-shot,
which learns nothing from a seed, must then agree with itself on every repeated item (checked).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from scipy.stats import permutation_test

from icr_app.core.tasks import split
from icr_app.stats import paired
from icr_app.suite_run import read_tasks, unit_path

Item = tuple[str, str, str]


def read_units(out: Path, tasks: str, seeds: list[int], n_test: int,
               methods: set[str]) -> dict[str, list[tuple[Item, bool]]]:
    """Per method, (item, correct) for every task of `tasks` (as given to the suite) and seed, in one fixed order."""
    runs: dict[str, list[tuple[Item, bool]]] = {m: [] for m in methods}
    for name, task in read_tasks(tasks.split(","))[0].items():
        for seed in seeds:
            _, test = split(task, n_test, seed)
            items = [(name, e.input, e.output) for e in test.examples]
            for method in methods:
                path = unit_path(out, name, seed, method)
                correct = json.loads(path.read_text())["result"]["correct"]
                if len(correct) != len(items):
                    raise ValueError(f"{path}: {len(correct)} items, the split gives {len(items)}")
                runs[method].extend(zip(items, correct))
    return runs


def check_items(zero_shot: list[tuple[Item, bool]]) -> None:
    """Zero-shot answers an item the same whatever the seed; a disagreement means the items were matched wrongly."""
    seen: dict[Item, bool] = {}
    for item, ok in zero_shot:
        if seen.setdefault(item, ok) != ok:
            raise ValueError(f"zero-shot differs between seeds on {item[0]}: the units do not match the splits")


def by_item(a: list[tuple[Item, bool]], b: list[tuple[Item, bool]], resamples: int) -> dict[str, float]:
    """Pairs, distinct items, the difference in points, the pooled McNemar p and the by-item sign-flip p."""
    sums: dict[Item, int] = {}
    for (item, x), (_, y) in zip(a, b, strict=True):
        sums[item] = sums.get(item, 0) + int(x) - int(y)
    d = np.array(list(sums.values()), dtype=float)
    # one item's sign flip gives the same |sum| both ways (p = 1); scipy wants two
    p_item = 1.0 if len(d) < 2 else float(permutation_test((d,), np.sum, permutation_type="samples",
                                                            n_resamples=resamples, random_state=0).pvalue)
    pooled = paired([x for _, x in a], [y for _, y in b])
    return {"pairs": len(a), "items": len(d), "points": 100 * d.sum() / len(a), "p_pooled": pooled["p_mcnemar"],
            "p_by_item": p_item}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="the suite's --out folder")
    ap.add_argument("--tasks", required=True, help="as given to the suite")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--n-test", type=int, default=100)
    ap.add_argument("--pairs", required=True, help="a:b,... compared as a − b")
    ap.add_argument("--resamples", type=int, default=20000)
    args = ap.parse_args()
    pairs = [pair.split(":") for pair in args.pairs.split(",")]
    methods = {"zero-shot"} | {m for pair in pairs for m in pair}
    runs = read_units(args.out, args.tasks, [int(s) for s in args.seeds.split(",")], args.n_test, methods)
    check_items(runs["zero-shot"])
    print("| a − b | pairs | distinct items | difference (points) | pooled McNemar p | by-item sign-flip p |")
    print("|---|---:|---:|---:|---:|---:|")
    for a, b in pairs:
        r = by_item(runs[a], runs[b], args.resamples)
        print(f"| {a} − {b} | {r['pairs']} | {r['items']} | {r['points']:+.1f} | {r['p_pooled']:.2g} | "
              f"{r['p_by_item']:.2g} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
