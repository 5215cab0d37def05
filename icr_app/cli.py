"""Command line: `python -m icr_app eval ...` and one subcommand per analysis.

Each subcommand is a small function that parses nothing itself; `main` builds the parser.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path

from tqdm import tqdm

from icr_app.evaluate import METHODS, EvalReport, evaluate
from icr_app.models import DEFAULT_MODEL, load_model
from icr_app.tasks import TaskError, load_task


def tqdm_progress(it, desc: str = "", **kw):
    return tqdm(it, desc=desc, leave=False, file=sys.stderr, **kw)


def format_table(report: EvalReport) -> str:
    head = f"{'method':<12} {'accuracy':>8} {'first-tok':>9} {'latency/q':>10} {'x zero-shot':>11} {'prompt tok':>10}"
    lines = [f"task={report.task} model={report.model} kind={report.kind} n_test={report.n_test} seed={report.seed}",
             head, "-" * len(head)]
    for name, r in report.methods.items():
        ratio = "-" if r.latency_ratio_to_zero_shot is None else f"{r.latency_ratio_to_zero_shot:.2f}x"
        lines.append(f"{name:<12} {r.accuracy:>8.3f} {r.first_token_accuracy:>9.3f} "
                     f"{r.latency_s * 1000:>8.1f}ms {ratio:>11} {r.mean_prompt_tokens:>10.1f}")
    return "\n".join(lines)


def cmd_eval(args: argparse.Namespace) -> int:
    task = load_task(args.data, args.input_col, args.output_col, args.task_type)
    lm = load_model(args.model)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    report = evaluate(lm, task, methods, n_test=args.n_test, seed=args.seed, shots=args.shots,
                      batch_size=args.batch_size, progress=partial(tqdm_progress, desc="batches"))
    print(format_table(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_json(), indent=2))
    return 0


def add_task_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, help="task file (.csv/.tsv/.json/.jsonl) or built-in task name")
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--input-col", default=None)
    p.add_argument("--output-col", default=None)
    p.add_argument("--task-type", default="auto", choices=["auto", "classification", "open"])
    p.add_argument("--seed", type=int, default=0)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m icr_app", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("eval", help="score methods side by side on a held-out split")
    add_task_args(p)
    p.add_argument("--methods", default="zero-shot,few-shot", help=f"comma list of: {', '.join(METHODS)}")
    p.add_argument("--n-test", type=int, default=100)
    p.add_argument("--shots", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--json", default=None, help="write the numbers to this JSON file")
    p.set_defaults(func=cmd_eval)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (TaskError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
