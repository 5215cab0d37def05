"""`site build`: learn a SITE task from all of a task's examples and save it (flags: the `eval` ones for SITE)."""

from __future__ import annotations

import argparse
from functools import partial

from icr_app.core.commandline import add_method_flags, add_task_args, method_config, model_from_args, tqdm_progress
from icr_app.core.tasks import load_task
from icr_app.methods.base import build_spec
from icr_app.methods.site import SPEC


def cmd_build(args: argparse.Namespace) -> int:
    task = load_task(args.data, args.input_col, args.output_col, args.task_type)
    lm = model_from_args(args)
    method = build_spec(SPEC, lm, task, method_config(args, SPEC), seed=args.seed,
                        progress=partial(tqdm_progress, desc="site"))
    method.save(args.out)
    site = method.state
    m = site.meta
    print(f"SITE task '{m.task}' for {site.fingerprint}: M={m.n_prompts} N={m.n_demos}, {m.steps} steps "
          f"(best at {m.best_step}), train loss {m.train_loss:.3f}, val loss {m.val_loss:.3f}, "
          f"val first-token accuracy {m.val_accuracy:.3f}, built in {m.build_s:.1f}s -> {args.out}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    site = sub.add_parser("site", help="SITE task embeddings with soft head selection")
    p = site.add_subparsers(dest="site_command", required=True).add_parser(
        "build", help="build a SITE task from all of a task's examples and save it")
    add_task_args(p)
    p.add_argument("--out", required=True, help="the .safetensors file to write")
    add_method_flags(p, SPEC)
    p.set_defaults(func=cmd_build)
