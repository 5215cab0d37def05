"""`atv train` (the `eval` flags `--atv-generator`, `--atv-strength` come from the method's config)."""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

from icr_app.cli.flags import command, config_from_flags, domains_command, model_from_args, tqdm_progress
from icr_app.core.tasks import load_task
from icr_app.methods.atv.generator import FILE, GeneratorConfig, build_generator


def cmd_train(args: argparse.Namespace) -> int:
    lm = model_from_args(args)
    gen = build_generator(lm, [load_task(d) for d in args.domains], config_from_flags(args, GeneratorConfig, ""),
                          progress=partial(tqdm_progress, desc="atv"))
    path = gen.save(Path(args.out) / FILE)
    m = gen.meta
    print(f"ATV generator for {len(m.domains)} domains saved to {path} ({path.stat().st_size / 1e6:.2f} MB, "
          f"trained in {m.build_s:.0f} s; mean held-out loss {m.val_loss[0]:.3f} zero-shot, "
          f"{min(m.val_loss):.3f} at step {m.best_step})")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    atv = command(sub, "atv", "ATV's generator of task vectors: train one").add_subparsers(
        dest="atv_command", required=True, metavar="COMMAND")
    p = domains_command(atv, "train", "train the generator across domains",
                        "icl-lab atv train --domains sentiment antonyms my_task.csv --out generators/mine",
                        "folder for generator.safetensors",
                        "the model the generator is for: a built-in name, a local checkpoint folder or a hub id",
                        GeneratorConfig, "the generator's recipe")
    p.set_defaults(func=cmd_train)
