"""`icr train` and `icr ensemble` (the `eval` flag `--icr-router` comes from the method's config)."""

from __future__ import annotations

import argparse
from functools import partial

from icr_app.core.commandline import add_model_args, model_from_args, tqdm_progress
from icr_app.core.config import add_config_flags, config_from_flags
from icr_app.core.tasks import load_task
from icr_app.methods.icr.router import ensemble_folders, members
from icr_app.methods.icr.train import TrainConfig, train_router


def cmd_train(args: argparse.Namespace) -> int:
    tasks = [load_task(d) for d in args.domains]
    train_router(model_from_args(args), tasks, args.out, config_from_flags(args, TrainConfig, ""),
                 progress=partial(tqdm_progress, desc="icr"), log_path=args.log)
    print(f"ICR router saved to {args.out} (training log: {args.log})")
    return 0


def cmd_ensemble(args: argparse.Namespace) -> int:
    router = ensemble_folders(model_from_args(args), args.members, args.out, alpha_scale=args.alpha_scale)
    print(f"ICR ensemble of {len(members(router.net))} routers saved to {args.out}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    icr = sub.add_parser("icr", help="in-context routing").add_subparsers(dest="icr_command", required=True)
    p = icr.add_parser("train", help="extract PIDs and train the ICR router (resumes from --out)")
    p.add_argument("--domains", nargs="+", required=True, help="task files or built-in names used for training")
    p.add_argument("--out", required=True, help="folder for pids.safetensors, router.safetensors, checkpoints")
    add_model_args(p, "the model to route: a built-in name, a local checkpoint folder or a hub id")
    p.add_argument("--log", default="/tmp/icr-train.jsonl", help="per-step losses (JSON lines)")
    add_config_flags(p, TrainConfig, "")
    p.set_defaults(func=cmd_train)
    p = icr.add_parser("ensemble", help="join routers trained on the same PIDs into one (mean routing bias)")
    p.add_argument("--members", nargs="+", required=True, help="router folders")
    p.add_argument("--out", required=True, help="folder for the ensemble's pids and router files")
    p.add_argument("--alpha-scale", type=float, default=None,
                   help="the joined router's α scale (default: the members' own, 0.8 after training)")
    add_model_args(p, "the model the routers were trained for")
    p.set_defaults(func=cmd_ensemble)
