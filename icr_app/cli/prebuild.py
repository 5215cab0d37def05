"""`prebuild`: the built-in tasks' methods, views and one-click answers that the app ships (`icr_app.prebuilt`).

    icl-lab prebuild --model smollm2-135m [--tasks sentiment,antonyms] [--out DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from icr_app.cli.flags import add_model_args, comma_list, command, model_from_args, tqdm_progress
from icr_app.core.tasks import builtin_names
from icr_app.prebuilt import PREBUILT, prebuild, stateful


def method_list(text: str) -> list[str]:
    """`--methods`: a comma list of methods, or "" for none (the answers, and the views unless --no-views)."""
    return comma_list(text) if text.strip() else []


def cmd_prebuild(args: argparse.Namespace) -> int:
    unknown = sorted(set(args.methods or []) - set(stateful()))
    if unknown:
        raise ValueError(f"not prebuildable: {', '.join(unknown)}; choose from {', '.join(stateful())}")
    prebuild(model_from_args(args), args.tasks or builtin_names(), root=Path(args.out),
             progress=tqdm_progress, methods=args.methods, views=not args.no_views)
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "prebuild", "build the built-in tasks' methods, views and one-click answers that the app ships",
                "icl-lab prebuild --model smollm2-135m --tasks sentiment,antonyms")
    add_model_args(p, "a built-in model name")
    p.add_argument("--tasks", type=comma_list, default=None, help="comma-separated built-in tasks (default: all)")
    p.add_argument("--out", default=str(PREBUILT), help="the folder (default: the package's assets/prebuilt)")
    p.add_argument("--methods", type=method_list, default=None,
                   help="comma-separated methods to build, \"\" for none (default: every stateful one but fine-tuning)")
    p.add_argument("--no-views", action="store_true", help="skip the views, keep those already there (the answers "
                   "to the one-click queries are always made)")
    p.set_defaults(func=cmd_prebuild)
