"""`elicit build-library` (the `eval` flags `--elicit-library`, `--elicit-strength`, ... come from the method's
config)."""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

from icr_app.cli.flags import command, config_from_flags, domains_command, model_from_args, tqdm_progress
from icr_app.core.tasks import load_task
from icr_app.methods.elicit.library import FILE, LibraryConfig, build_library


def cmd_build_library(args: argparse.Namespace) -> int:
    lm = model_from_args(args)
    library = build_library(lm, [load_task(d) for d in args.domains], config_from_flags(args, LibraryConfig, ""),
                            progress=partial(tqdm_progress, desc="elicit"))
    path = library.save(Path(args.out) / FILE, lm.fingerprint)
    info = library.info
    print(f"ELICIT library of {len(info['entries'])} entries saved to {path} ({path.stat().st_size / 1e6:.2f} MB, "
          f"built in {info['build_s']:.0f} s; held-out queries retrieving their own entry: "
          f"{info['held_out_top1']:.2f})")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    elicit = command(sub, "elicit", "ELICIT's capability library: build one").add_subparsers(
        dest="elicit_command", required=True, metavar="COMMAND")
    p = domains_command(elicit, "build-library", "build the library of task vectors and train its retriever",
                        "icl-lab elicit build-library --domains sentiment antonyms my_task.csv --out libraries/mine",
                        "folder for library.safetensors",
                        "the model the library is built for: a built-in name, a local checkpoint folder or a hub id",
                        LibraryConfig, "the library's recipe")
    p.set_defaults(func=cmd_build_library)
