"""ICR benchmark: zero-shot, few-shot and icr on in-domain and unseen tasks, timed in the same run.

Usage: python bench/icr_benchmark.py --out /tmp/icr-bench.json [--router assets/icr] [--n-test 100]
       [--ablation-router DIR --ablation-task PATH] (icr with another router, e.g. a random basis)
Prints a Markdown table and counts collapses (icr below zero-shot).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from icr_app.evaluate import evaluate
from icr_app.models import load_model
from icr_app.tasks import load_task

FV = "../shared/data/fv/"
IN_DOMAIN = [FV + n + ".json" for n in ("sentiment", "ag_news", "person-instrument", "antonym", "capitalize",
                                        "present-past")]
UNSEEN = [FV + "singular-plural.json", FV + "country-capital.json", FV + "national_parks.json", "emotion"]


def run(router: str, paths: list[str], methods: list[str], n_test: int) -> dict[str, dict]:
    lm = load_model()
    out = {}
    for path in paths:
        report = evaluate(lm, load_task(path), methods, n_test=n_test, icr_router=router)
        out[report.task] = {m: {"acc": r.accuracy, "first": r.first_token_accuracy, "ms": r.latency_s * 1000,
                                "ratio": r.latency_ratio_to_zero_shot, "n": r.n} for m, r in report.methods.items()}
        print(path, json.dumps(out[report.task]), flush=True)
    return out


def table(results: dict[str, dict], group: str) -> list[str]:
    lines = [f"| {group} task | n | zero-shot | few-shot | icr | icr − zs | icr latency × zs |",
             "|---|---|---|---|---|---|---|"]
    for task, r in results.items():
        zs, fs, icr = r["zero-shot"]["acc"], r["few-shot"]["acc"], r["icr"]["acc"]
        lines.append(f"| {task} | {r['icr']['n']} | {zs:.3f} | {fs:.3f} | {icr:.3f} | {icr - zs:+.3f} | "
                     f"{r['icr']['ratio']:.2f} |")
    mean = {m: sum(r[m]["acc"] for r in results.values()) / len(results) for m in ("zero-shot", "few-shot", "icr")}
    ratio = sum(r["icr"]["ms"] for r in results.values()) / sum(r["zero-shot"]["ms"] for r in results.values())
    collapses = sum(r["icr"]["acc"] < r["zero-shot"]["acc"] for r in results.values())
    lines.append(f"| **mean** | | {mean['zero-shot']:.3f} | {mean['few-shot']:.3f} | {mean['icr']:.3f} | "
                 f"{mean['icr'] - mean['zero-shot']:+.3f} | {ratio:.2f} (total time) |")
    lines.append(f"\ncollapses (icr < zero-shot): {collapses} of {len(results)}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--router", default=None, help="router folder (default: the pretrained one in assets/icr)")
    ap.add_argument("--n-test", type=int, default=100)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ablation-router", default=None)
    ap.add_argument("--ablation-task", default=UNSEEN[0])
    ap.add_argument("--skip-main", action="store_true")
    args = ap.parse_args()
    saved = {}
    methods = ["zero-shot", "few-shot", "icr"]
    if not args.skip_main:
        saved["in-domain"] = run(args.router, IN_DOMAIN, methods, args.n_test)
        saved["unseen"] = run(args.router, UNSEEN, methods, args.n_test)
        print("\n".join(table(saved["in-domain"], "in-domain") + [""] + table(saved["unseen"], "unseen")))
    if args.ablation_router:
        saved["ablation"] = {
            "pids": run(args.router, [args.ablation_task], ["zero-shot", "icr"], args.n_test),
            "random": run(args.ablation_router, [args.ablation_task], ["zero-shot", "icr"], args.n_test),
        }
    Path(args.out).write_text(json.dumps(saved, indent=2))


if __name__ == "__main__":
    main()
