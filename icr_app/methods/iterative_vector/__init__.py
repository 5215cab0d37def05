"""Iterative Vectors (Liu & Deng, ICML 2025): what demonstrations change in every attention output, refined by
running them again with the vectors already found added in, then added to a zero-shot query's attention outputs.

`method` extracts and runs them (episodes, updates, the edit), `artefact` is a built set and its file, `figures`
draws their norms per layer and update and sums them up for the app's tab (`SPEC.view`).
"""

from icr_app.core.strings import folder_strings
from icr_app.methods.base import MethodView
from icr_app.methods.iterative_vector.method import (
    PAPER,
    IterativeVectorConfig,
    IterativeVectorMethod,
    build,
    neutral,
)
from icr_app.methods.state import stateful_spec

SPEC = stateful_spec(
    IterativeVectorMethod, title="Iterative vectors", config=IterativeVectorConfig, build=build, kind="implicit",
    presets={"paper": PAPER}, neutral=neutral,
    description="what demonstrations change in every attention output, refined over episodes with the vectors "
                "already added (no backpropagation), added at the zero-shot query's last token",
    view=MethodView("iv", "icr_app.methods.iterative_vector.figures:norm_figure",
                    "icr_app.methods.iterative_vector.figures:summary"),
    strings=folder_strings(__file__),
)
