"""Learned task vectors (Yang et al., 2025): a vector trained by gradient descent, added at one block's output at
the zero-shot prompt's last token.

`method` trains and runs it (the sweep over blocks, the training, the intervention), `artefact` is a built one
and its file, `figures` draws its sweep and norms and sums it up for the app's tab (`SPEC.view`).
"""

from icr_app.core.strings import folder_strings
from icr_app.methods.base import MethodView
from icr_app.methods.learned_task_vector.method import (
    PAPER,
    LearnedTaskVectorConfig,
    LearnedTaskVectorMethod,
    build,
    neutral,
)
from icr_app.methods.state import stateful_spec

SPEC = stateful_spec(
    LearnedTaskVectorMethod, title="Learned task vector", config=LearnedTaskVectorConfig, build=build,
    kind="implicit", presets={"paper": PAPER}, neutral=neutral,
    description="a vector trained by gradient descent (model frozen), added at one block's output at the zero-shot "
                "query's last token",
    view=MethodView("ltv", "icr_app.methods.learned_task_vector.figures:sweep_figure",
                    "icr_app.methods.learned_task_vector.figures:summary"),
    strings=folder_strings(__file__),
)
