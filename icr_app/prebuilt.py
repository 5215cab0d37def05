"""Prebuilt results for the built-in tasks, so the app answers at first sight.

For a built-in model and each built-in task, `icl-lab prebuild` builds every method that learns from the
examples (on the whole task, as the app's Build button does) and saves its artefact, and computes each
mechanism view with the app's default settings; both ship as package data under
`icr_app/assets/prebuilt/<model>/<task>/`. The app loads them when a visitor picks that task, and every tab
keeps a button to recompute on the visitor's own settings. Artefacts are checked against the loaded model's
fingerprint, so a file made for another model is never used.

    icl-lab prebuild --model smollm2-135m [--tasks sentiment,antonyms] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import time
from functools import partial
from pathlib import Path
from typing import Any

from icr_app.core.artefacts import ArtefactError
from icr_app.core.models import DEFAULT_MODEL, LoadedModel, load_model
from icr_app.core.paths import ASSETS
from icr_app.core.progress import Progress, no_progress
from icr_app.core.tasks import Task, builtin_names, builtin_task
from icr_app.methods import REGISTRY
from icr_app.methods.base import Answering, BuildContext, Method

PREBUILT = ASSETS / "prebuilt"
VIEWS = "views.json"
SEED = 0
EVALUATE = {"methods": ["zero-shot", "few-shot"], "n_test": 40}  # the Evaluate tab's defaults


def folder(lm: LoadedModel, task: str, root: Path | None = None) -> Path:
    return (root or PREBUILT) / lm.name / task


def stateful() -> list[str]:
    """The registered methods that learn from the examples and can be saved, but not fine-tuning: a LoRA
    adapter is megabytes per task, too much to ship for every built-in task, so the app builds it on demand."""
    return [name for name, spec in REGISTRY.items()
            if not spec.instant and spec.save is not None and spec.kind != "fine-tuning"]


def load_methods(lm: LoadedModel, task: str, root: Path | None = None) -> dict[str, Method]:
    """The prebuilt methods of `task` for this model; a missing file or one for another model is skipped."""
    out: dict[str, Method] = {}
    for name in stateful():
        path = folder(lm, task, root) / f"{name}.safetensors"
        if path.is_file():
            try:
                out[name] = REGISTRY[name].load(path, lm)
            except ArtefactError:
                continue
    return out


def load_views(lm: LoadedModel, task: str, root: Path | None = None) -> dict[str, Any]:
    """The cached mechanism views of `task` for this model ({} when there are none)."""
    path = folder(lm, task, root) / VIEWS
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    return data["views"] if data.get("fingerprint") == lm.fingerprint else {}


def build_method(lm: LoadedModel, task: Task, name: str, config: Any = None, progress: Progress = no_progress
                 ) -> Method:
    """What the app's Build button builds: the method on the whole task, with its default config."""
    spec = REGISTRY[name]
    ctx = BuildContext(lm, task, Answering.of(lm, task), seed=SEED, progress=progress)
    t0 = time.perf_counter()
    method = spec.build(ctx, config or spec.config())
    method.build_s = time.perf_counter() - t0
    return method


def compute_views(lm: LoadedModel, task: Task, progress: Progress = no_progress) -> dict[str, Any]:
    """Each mechanism tab's result with the app's default settings, as JSON."""
    from icr_app.analyses.anchors.cached import default_views as anchor_views
    from icr_app.analyses.rank1.cached import default_view as rank1_view
    from icr_app.evaluate import evaluate

    run = evaluate(lm, task, EVALUATE["methods"], n_test=EVALUATE["n_test"], seed=SEED, progress=progress)
    views: dict[str, Any] = {"rank1": rank1_view(lm, task, progress), "evaluate": run.to_json()}
    if task.kind == "classification":
        views.update(anchor_views(lm, task, progress))
    return views


def prebuild(lm: LoadedModel, tasks: list[str], root: Path | None = None, progress: Progress = no_progress,
             configs: dict[str, Any] | None = None, methods: list[str] | None = None, views: bool = True) -> None:
    """Build and save the stateful `methods` (default: all) and the views of each task (`configs`: other
    configs than the defaults, for tests on tiny models)."""
    configs = configs or {}
    for name in progress(tasks, desc="tasks"):
        task = builtin_task(name)
        out = folder(lm, name, root)
        out.mkdir(parents=True, exist_ok=True)
        for method in stateful() if methods is None else methods:
            try:
                built = build_method(lm, task, method, configs.get(method), partial(progress, desc=f"{name}: {method}"))
            except Exception as err:  # a method that cannot serve a task ships nothing for it
                print(f"{name}: {method} not prebuilt: {err}")
                continue
            REGISTRY[method].save(built, out / f"{method}.safetensors")
            print(f"{name}: {method} built in {built.build_s:.1f} s")
        if views:
            t0 = time.perf_counter()
            data = {"fingerprint": lm.fingerprint, "views": compute_views(lm, task, progress)}
            (out / VIEWS).write_text(json.dumps(data, allow_nan=False))
            print(f"{name}: views computed in {time.perf_counter() - t0:.1f} s")


def cmd_prebuild(args: argparse.Namespace) -> int:
    from icr_app.cli.common import tqdm_progress

    tasks = [t for t in args.tasks.split(",") if t] if args.tasks else builtin_names()
    methods = None if args.methods is None else [m for m in args.methods.split(",") if m]
    unknown = sorted(set(methods or []) - set(stateful()))
    if unknown:
        raise ValueError(f"not prebuildable: {', '.join(unknown)}; choose from {', '.join(stateful())}")
    prebuild(load_model(args.model), tasks, Path(args.out), tqdm_progress, methods=methods, views=not args.no_views)
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("prebuild", help="build the built-in tasks' methods and views that the app ships")
    p.add_argument("--model", default=DEFAULT_MODEL, help="a built-in model name")
    p.add_argument("--tasks", default=None, help="comma-separated built-in tasks (default: all)")
    p.add_argument("--out", default=str(PREBUILT), help="the folder (default: the package's assets/prebuilt)")
    p.add_argument("--methods", default=None, help="comma-separated methods to build (default: every stateful one "
                   "but fine-tuning)")
    p.add_argument("--no-views", action="store_true", help="build the methods only, keep the views already there")
    p.set_defaults(func=cmd_prebuild)
