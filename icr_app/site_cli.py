"""SITE on the command line: `site build` and the optional `--site-*` flags of `eval`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial
from typing import Any

from icr_app.models import load_model
from icr_app.site import SiteConfig, build_site
from icr_app.site_artefact import save_site
from icr_app.tasks import load_task


def add_site_config_args(p: argparse.ArgumentParser) -> None:
    d = SiteConfig()
    p.add_argument("--site-prompts", type=int, default=None, help=f"M few-shot prompts for t (default {d.n_prompts})")
    p.add_argument("--site-demos", type=int, default=None, help=f"N demos per prompt (default {d.n_demos})")
    p.add_argument("--site-steps", type=int, default=None, help=f"max training steps (default {d.steps})")
    p.add_argument("--site-paper", action="store_true", help="the paper's setting: M=50, N=10, 400 steps of batch 1")


def site_opts(args: argparse.Namespace) -> dict[str, Any]:
    """The `evaluate` opts that `SiteConfig.from_opts` reads."""
    return {"site_prompts": args.site_prompts, "site_demos": args.site_demos, "site_steps": args.site_steps,
            "site_paper": args.site_paper}


def cmd_site_build(args: argparse.Namespace, progress: Callable) -> int:
    task = load_task(args.data, args.input_col, args.output_col, args.task_type)
    lm = load_model(args.model)
    config = SiteConfig.from_opts({**site_opts(args), "seed": args.seed})
    site = build_site(lm, task, config=config, progress=partial(progress, desc="site"))
    save_site(site, args.out)
    m = site.meta
    print(f"SITE task '{m.task}' for {m.fingerprint}: M={m.n_prompts} N={m.n_demos}, {m.steps} steps "
          f"(best at {m.best_step}), train loss {m.train_loss:.3f}, val loss {m.val_loss:.3f}, "
          f"val first-token accuracy {m.val_accuracy:.3f}, built in {m.build_s:.1f}s -> {args.out}")
    return 0


def add_site_commands(sub: argparse._SubParsersAction, add_task_args: Callable, progress: Callable) -> None:
    site = sub.add_parser("site", help="SITE task embeddings with soft head selection")
    p = site.add_subparsers(dest="site_command", required=True).add_parser(
        "build", help="build a SITE task from all of a task's examples and save it")
    add_task_args(p)
    p.add_argument("--out", required=True, help="the .safetensors file to write")
    add_site_config_args(p)
    p.set_defaults(func=partial(cmd_site_build, progress=progress))
