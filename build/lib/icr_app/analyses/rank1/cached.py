"""The rank-1 tab's result as JSON, computed with the app's defaults (and shipped for the built-in tasks by
`icl-lab prebuild`) or on a visitor's settings: one code path for both."""

from __future__ import annotations

from typing import Any

from icr_app.analyses.rank1.analysis import Rank1Report, rank1_analysis
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.tasks import Task

MAX_SHOTS = 8  # every shot adds a row to the sweep: 8 keeps the check under a minute on 2 cores
DEFAULTS = {"shots": MAX_SHOTS, "seed": 0}


def rank1(lm: LoadedModel, task: Task, shots: int, seed: int, progress: Progress = no_progress) -> dict[str, Any]:
    return rank1_analysis(lm, task, layer=None, shots=min(shots, MAX_SHOTS), seed=seed, progress=progress).to_json()


def default_views(lm: LoadedModel, task: Task, progress: Progress = no_progress) -> dict[str, Any]:
    """The rank-1 view with the app's defaults (its `AnalysisSpec.views`)."""
    return {"rank1": rank1(lm, task, DEFAULTS["shots"], DEFAULTS["seed"], progress)}


def report(data: dict[str, Any]) -> Rank1Report:
    return Rank1Report.from_json(data)
