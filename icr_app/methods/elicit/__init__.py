"""ELICIT (Wang et al., ICLR 2025): a library of task vectors built once from in-domain tasks, and a retriever
that picks, per query, the entry to add in the residual stream, or none.

`library` builds the library and trains the retriever, `method` answers with it, `figures` draws which entry
each query of a task got (the app's ELICIT tab). `icr_app/assets/elicit/<model>/` holds the library shipped for
a built-in model, built from the same domains as the shipped ICR router.
"""

from icr_app.core.strings import folder_strings
from icr_app.methods.base import MethodView
from icr_app.methods.elicit.method import ElicitConfig, ElicitMethod, build, neutral
from icr_app.methods.state import stateful_spec

SPEC = stateful_spec(
    ElicitMethod, title="ELICIT (capability library)", config=ElicitConfig, build=build, kind="implicit",
    instant=True, neutral=neutral,
    presets={"paper": ("the paper's strength 2 and recall 0.8, which are also the defaults",
                       lambda: ElicitConfig(strength=2.0, recall=0.8))},
    description="a retriever trained once on other tasks picks a task vector from a library and adds it at its "
                "layer; no examples at inference",
    view=MethodView("elicit", "icr_app.methods.elicit.figures:picks_figure",
                    "icr_app.methods.elicit.figures:summary"),
    strings=folder_strings(__file__),
)
