"""Adaptive Task Vectors (ATV; Kang et al., 2025): a small generator, trained once across tasks, makes from each
query a vector per block, added to the residual stream at the query's last token; no examples at inference.

`generator` trains and stores the generator, `method` answers with it, `figures` draws the vectors' norms per
query and block (the app's ATV tab). `icr_app/assets/atv/<model>/` holds the generator shipped for a built-in
model, trained on the same domains as the shipped ICR router and ELICIT library.
"""

from icr_app.core.strings import folder_strings
from icr_app.methods.atv.method import AtvConfig, AtvMethod, build, neutral
from icr_app.methods.base import MethodView
from icr_app.methods.state import stateful_spec

SPEC = stateful_spec(
    AtvMethod, title="ATV (adaptive task vectors)", config=AtvConfig, build=build, kind="implicit",
    instant=True, neutral=neutral,
    presets={"paper": ("the paper's use of the generator: its vectors added as trained (strength 1), which is "
                       "also the default", lambda: AtvConfig(strength=1.0))},
    description="a generator trained once on other tasks makes a vector per block from each query and adds it at "
                "the query's last token; no examples at inference",
    view=MethodView("atv", "icr_app.methods.atv.figures:norms_figure", "icr_app.methods.atv.figures:summary"),
    strings=folder_strings(__file__),
)
