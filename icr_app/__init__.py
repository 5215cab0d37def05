"""ICL Lab: zero-shot, few-shot and implicit in-context learning (SITE, ICR, ...) side by side.

The public Python API (`icr_app.api`, README "Use it from Python"): `wrap`, `load_model`, `checkpoint`, `build`,
`load`, `methods()`, `analyses()`.
"""

__version__ = "0.1.0"

# Bound last, on purpose: importing the API imports the `methods` and `analyses` subpackages, which sets those
# names on this package to the modules; the registry functions of the same names must be what `icr_app.methods`
# means from here on (code inside the package imports from the subpackages by their full names).
from icr_app.api import (  # noqa: E402
    BuildError,
    Examples,
    LoadedModel,
    Method,
    Prediction,
    analyses,
    build,
    checkpoint,
    examples_task,
    load,
    load_model,
    methods,
    wrap,
)

__all__ = ["BuildError", "Examples", "LoadedModel", "Method", "Prediction", "analyses", "build", "checkpoint",
           "examples_task", "load", "load_model", "methods", "wrap"]
