"""`icr train` and `icr ensemble` (the `eval` flag `--icr-router` comes from the method's config)."""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

from icr_app.cli.flags import (
    add_model_args,
    command,
    config_from_flags,
    domains_command,
    model_from_args,
    tqdm_progress,
)
from icr_app.core.tasks import load_task
from icr_app.methods.icr.router import ensemble_folders, members
from icr_app.methods.icr.train import TrainConfig, train_router

TRAIN_LOG = "train-log.jsonl"  # in --out, where each run of a resumed training appends its steps


def cmd_train(args: argparse.Namespace) -> int:
    tasks = [load_task(d) for d in args.domains]
    log = args.log or Path(args.out) / TRAIN_LOG
    train_router(model_from_args(args), tasks, args.out, config_from_flags(args, TrainConfig, ""),
                 progress=partial(tqdm_progress, desc="icr"), log_path=log)
    print(f"ICR router saved to {args.out} (training log: {log})")
    return 0


def cmd_ensemble(args: argparse.Namespace) -> int:
    router = ensemble_folders(model_from_args(args), args.members, args.out, alpha_scale=args.alpha_scale)
    print(f"ICR ensemble of {len(members(router.net))} routers saved to {args.out}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    icr = command(sub, "icr", "ICR's router: train one, or join several").add_subparsers(
        dest="icr_command", required=True, metavar="COMMAND")
    p = domains_command(icr, "train", "extract PIDs and train the ICR router (resumes from --out)",
                        "icl-lab icr train --domains sentiment antonyms my_task.csv --out routers/mine --seed 0",
                        "folder for pids.safetensors, router.safetensors, checkpoints",
                        "the model to route: a built-in name, a local checkpoint folder or a hub id",
                        TrainConfig, "the router's training recipe")
    p.add_argument("--log", default=None, help="per-step losses, appended as JSON lines (default: --out's "
                   f"{TRAIN_LOG}, beside the checkpoint a run resumes from)")
    p.set_defaults(func=cmd_train)
    p = command(icr, "ensemble", "join routers trained on the same PIDs into one (mean routing bias)",
                "icl-lab icr ensemble --members routers/s0 routers/s1 --out routers/joined")
    p.add_argument("--members", nargs="+", required=True, help="router folders")
    p.add_argument("--out", required=True, help="folder for the ensemble's router.safetensors (its PIDs inside)")
    p.add_argument("--alpha-scale", type=float, default=None,
                   help="the joined router's α scale (default: the members' own, 0.8 after training)")
    add_model_args(p, "the model the routers were trained for")
    p.set_defaults(func=cmd_ensemble)
