"""ICR, in-context routing: a router trained once biases attention along principal ICL directions (PIDs).

`pids` extracts the directions, `routing` is the attention edit, `router` the network and its stored state,
`train` trains it, `method` runs it, `figures` draws α and γ for the visitor's query and sums up a built router
(the app's ICR tab, from the view in `SPEC`). `icr_app/assets/icr/<model>/` holds the router shipped for a
built-in model.
"""

from icr_app.core.strings import folder_strings
from icr_app.methods.base import MethodView, QueryFigures
from icr_app.methods.icr.method import ICRConfig, ICRMethod, build, neutral
from icr_app.methods.state import stateful_spec

SPEC = stateful_spec(
    ICRMethod, title="ICR (pretrained router)", config=ICRConfig, build=build, instant=True, neutral=neutral,
    view=MethodView("icr", None, "icr_app.methods.icr.figures:summary",
                    query=QueryFigures("icr_app.methods.icr.figures:query_maps", ("icr.alpha", "icr.gamma"))),
    description="a router trained once on other tasks bends attention along principal ICL directions; "
                "no examples at inference",
    strings=folder_strings(__file__),
)
