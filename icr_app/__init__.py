"""ICL Lab: zero-shot, few-shot and implicit in-context learning (SITE, ICR, ...) side by side.

The public Python API (`icr_app.api`; README shows it at work): `load_model`, `wrap`, `checkpoint`, `build`,
`load`, `export`, `evaluate`, `suite`, `register_method`, `method_specs`, `analysis_specs`, and `harness_lm` (a built
method inside lm-evaluation-harness, `icr_app.harness`); the types a user touches
(`LoadedModel`, `Method`, `MethodSpec`, `Prediction`, `Task`, `SeedsReport`) and the errors to catch.
"""

from icr_app.api import (
    analysis_specs,
    build,
    checkpoint,
    evaluate,
    export,
    load,
    load_model,
    method_specs,
    register_method,
    suite,
    wrap,
)
from icr_app.core.artefacts import ArtefactError, ArtefactModelError
from icr_app.core.loading import ModelTooLargeError
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Cancelled
from icr_app.core.tasks import Task, TaskError
from icr_app.evaluation import SeedsReport
from icr_app.harness import HarnessError, harness_lm
from icr_app.methods import ExportError
from icr_app.methods.base import BuildError, Method, MethodSpec, Prediction

__version__ = "0.1.0"  # the one place it is written: pyproject reads it, CHANGELOG.md names it

__all__ = ["ArtefactError", "ArtefactModelError", "BuildError", "Cancelled", "ExportError", "HarnessError",
           "LoadedModel", "Method", "MethodSpec", "ModelTooLargeError", "Prediction", "SeedsReport", "Task",
           "TaskError", "analysis_specs", "build", "checkpoint", "evaluate", "export", "harness_lm", "load",
           "load_model", "method_specs", "register_method", "suite", "wrap"]
