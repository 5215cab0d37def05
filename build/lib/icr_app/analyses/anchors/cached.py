"""The anchor tab's results as JSON, computed once with the app's default settings (and shipped for the
built-in tasks by `icl-lab prebuild`) or again on a visitor's settings: one code path for both."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from icr_app.analyses.anchors.compression import compression_experiment, fixed_demo_prompts
from icr_app.analyses.anchors.confusion import confusion_experiment
from icr_app.analyses.anchors.flow_figures import flow_graph
from icr_app.analyses.anchors.isolation import isolation_experiment
from icr_app.analyses.anchors.reweighting import reweight_experiment
from icr_app.analyses.anchors.saliency import information_flow, task_prompts
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import SHOTS, Template
from icr_app.core.tasks import Task

DEFAULTS = {"n_prompts": 4, "shots": SHOTS, "seed": 0, "k": 5, "n_test": 40}
EXPERIMENTS = ("re-weighting", "compression", "confusion")


def flow(lm: LoadedModel, task: Task, n_prompts: int, shots: int, seed: int,
         progress: Progress = no_progress) -> dict[str, Any]:
    """The flow curves over `n_prompts` prompts and the first prompt's links, {"result", "graph"}."""
    prompts = task_prompts(lm, task, n_prompts, shots, seed)
    kept: list = []
    result = information_flow(lm, task, prompts, progress, keep=lambda p, sal: kept.append((p, sal)) if not kept
                              else None)
    return {"result": asdict(result), "graph": flow_graph(*kept[0]).to_json()}


def isolation(lm: LoadedModel, task: Task, k: int, shots: int, seed: int,
              progress: Progress = no_progress) -> list[dict[str, Any]]:
    prompts = task_prompts(lm, task, 24, shots, seed)
    return [asdict(r) for r in isolation_experiment(lm, prompts, task.labels, k=k, seed=seed, progress=progress)]


def experiment(lm: LoadedModel, task: Task, kind: str, n: int, shots: int, seed: int,
               progress: Progress = no_progress) -> dict[str, Any]:
    if kind == "re-weighting":
        train, prompts = fixed_demo_prompts(lm, task, n, None, seed, Template())
        return reweight_experiment(lm, task, train, prompts, Template(), seed=seed, progress=progress).to_json()
    if kind == "compression":
        _, prompts = fixed_demo_prompts(lm, task, n, shots, seed, Template())
        return compression_experiment(lm, task, prompts, progress=progress).to_json()
    prompts = task_prompts(lm, task, n, shots, seed)
    return confusion_experiment(lm, task.name, prompts, task.labels, progress=progress).to_json()


def default_views(lm: LoadedModel, task: Task, progress: Progress = no_progress) -> dict[str, Any]:
    """Every anchor result with the app's defaults (its `AnalysisSpec.views`): none for an open task, which has no
    label words; an experiment a model cannot run is left out."""
    if task.kind != "classification":
        return {}
    d = DEFAULTS
    views: dict[str, Any] = {"flow": flow(lm, task, d["n_prompts"], d["shots"], d["seed"], progress),
                             "isolation": isolation(lm, task, min(d["k"], lm.n_layers), d["shots"], d["seed"],
                                                    progress)}
    for kind in EXPERIMENTS:
        try:
            views[kind] = experiment(lm, task, kind, d["n_test"], d["shots"], d["seed"], progress)
        except ValueError:  # e.g. compression on a sliding-window model
            continue
    return views
