"""Command line: `python -m icr_app eval ...` and one subcommand per analysis.

Each subcommand is a small function that parses nothing itself; `main` builds the parser.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path

import torch
from tqdm import tqdm

from icr_app.anchors.commands import add_anchor_commands
from icr_app.evaluate import METHODS, EvalReport, evaluate
from icr_app.icr_train import add_config_args, config_from_args, train_router
from icr_app.models import DEFAULT_MODEL, load_model
from icr_app.prompts import SHOTS
from icr_app.rank1 import as_dtype, rank1_analysis, summary_table
from icr_app.router import ensemble_folders, members
from icr_app.site_cli import add_site_commands, add_site_config_args, site_opts
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
                      batch_size=args.batch_size, progress=partial(tqdm_progress, desc="batches"),
                      icr_router=args.icr_router, **site_opts(args))
    print(format_table(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_json(), indent=2))
    return 0


def cmd_icr_train(args: argparse.Namespace) -> int:
    tasks = [load_task(d) for d in args.domains]
    train_router(load_model(args.model), tasks, args.out, config_from_args(args),
                 progress=partial(tqdm_progress, desc="icr"), log_path=args.log)
    print(f"ICR router saved to {args.out} (training log: {args.log})")
    return 0


def cmd_icr_ensemble(args: argparse.Namespace) -> int:
    router = ensemble_folders(load_model(args.model), args.members, args.out, alpha_scale=args.alpha_scale)
    print(f"ICR ensemble of {len(members(router.net))} routers saved to {args.out}")
    return 0


def cmd_rank1(args: argparse.Namespace) -> int:
    task = load_task(args.data, args.input_col, args.output_col, args.task_type)
    lm = as_dtype(load_model(args.model), getattr(torch, args.dtype))
    report = rank1_analysis(lm, task, layer=args.layer, shots=args.shots, n_transfer=args.n_transfer,
                            seed=args.seed, progress=partial(tqdm_progress, desc="rank1"))
    print(summary_table(report))
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
    p.add_argument("--shots", type=int, default=SHOTS)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--json", default=None, help="write the numbers to this JSON file")
    p.add_argument("--icr-router", default=None, help="router folder for `icr` (default: the shipped one)")
    add_site_config_args(p)
    p.set_defaults(func=cmd_eval)
    add_site_commands(sub, add_task_args, tqdm_progress)
    add_anchor_commands(sub, add_task_args, tqdm_progress)
    icr = sub.add_parser("icr", help="in-context routing").add_subparsers(dest="icr_command", required=True)
    p = icr.add_parser("train", help="extract PIDs and train the ICR router (resumes from --out)")
    p.add_argument("--domains", nargs="+", required=True, help="task files or built-in names used for training")
    p.add_argument("--out", required=True, help="folder for pids.*, router.*, checkpoint.*")
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--log", default="/tmp/icr-train.jsonl", help="per-step losses (JSON lines)")
    add_config_args(p)
    p.set_defaults(func=cmd_icr_train)
    p = icr.add_parser("ensemble", help="join routers trained on the same PIDs into one (mean routing bias)")
    p.add_argument("--members", nargs="+", required=True, help="router folders (pids.* + router.*)")
    p.add_argument("--out", required=True, help="folder for the ensemble's pids.* and router.*")
    p.add_argument("--alpha-scale", type=float, default=None,
                   help="the joined router's α scale (default: the members' own, 0.8 after training)")
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.set_defaults(func=cmd_icr_ensemble)
    p = sub.add_parser("rank1", help="ICL as a rank-1 weight update: check the identity per layer")
    add_task_args(p)
    p.add_argument("--layer", type=int, default=None, help="check one layer (default: every layer)")
    p.add_argument("--shots", type=int, default=5)
    p.add_argument("--n-transfer", type=int, default=3, help="other queries for the transfer check")
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    p.add_argument("--json", default=None, help="write the report (max_abs_error per layer, ...) to this file")
    p.set_defaults(func=cmd_rank1)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (TaskError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
