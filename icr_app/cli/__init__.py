"""Command line: `icl-lab <command> ...` (or `python -m icr_app <command> ...`); docs/cli.md is its reference.

`eval` and `suite` run methods over tasks (they share the run flags, one flag group per registered method);
`build` learns one method and saves it; `prebuild` makes what the app ships; `icr` trains ICR's router; `elicit`
builds ELICIT's library; `atv` trains ATV's generator; the analyses have their own commands; `app` serves the web
page. Every command calls the library; none re-implements it.
"""

from __future__ import annotations

import argparse
import sys

from icr_app import parallel
from icr_app.cli import anchors, atv, build, data, elicit, export, harness, icr, prebuild, rank1, run
from icr_app.cli.flags import add_model_args, command, loading_options, show_defaults
from icr_app.core.progress import Cancelled
from icr_app.core.tasks import TaskError

# add_commands adds each module's subcommands
COMMANDS = (run, build, prebuild, icr, elicit, atv, anchors, rank1, data, export, harness)
CANCELLED = 130  # the shell's status for a command stopped by Ctrl-C


def cmd_app(args: argparse.Namespace) -> int:
    from icr_app.app import launch
    from icr_app.app.pool import Budget

    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
    gib = args.models_memory
    budget = Budget(args.max_models, None if gib is None else int(gib * 2**30))
    launch(args.model or (models[0] if models else None), loading_options(args), models=models, budget=budget,
           server_name=args.host, server_port=args.port, share=args.share, root_path=args.root_path)
    return 0


def add_app_command(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "app", "serve the web app", "icl-lab app --models smollm2-135m,gemma3-270m --max-models 2")
    p.add_argument("--host", default=None, help="address to listen on (default: Gradio's, 127.0.0.1; 0.0.0.0 for "
                                                "every address, e.g. a classroom's network)")
    p.add_argument("--port", type=int, default=None, help="port (default: Gradio's, 7860 or $GRADIO_SERVER_PORT)")
    p.add_argument("--models", default=None, help="comma-separated models the page's picker offers (one model: "
                                                  "no picker; default: the served model and the installed built-ins)")
    p.add_argument("--max-models", type=int, default=None, help="models kept loaded at once at most (default: as "
                                                                "many as the free memory holds)")
    p.add_argument("--models-memory", type=float, default=None, metavar="GIB",
                   help="GiB the loaded models may take together (default: the memory free when one loads)")
    p.add_argument("--share", action="store_true", help="also serve through a public gradio.live link (Gradio's)")
    p.add_argument("--root-path", default=None, help="the URL path the page is served under behind a proxy")
    add_model_args(p, "the model every visitor starts with (default: the first of --models, else $ICL_LAB_MODEL or "
                      "smollm2-135m)", default=None)
    p.set_defaults(func=cmd_app)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="icl-lab", description=__doc__.split("\n\n")[0], allow_abbrev=False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        module.add_commands(sub)
    add_app_command(sub)
    show_defaults(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (TaskError, ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, Cancelled):
        print("cancelled", file=sys.stderr)
        return CANCELLED
    finally:
        parallel.finish()
