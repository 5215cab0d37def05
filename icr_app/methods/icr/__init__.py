"""ICR, in-context routing: a router trained once biases attention along principal ICL directions (PIDs).

`pids` extracts the directions, `routing` is the attention edit, `router` the network and its artefact,
`train` trains it, `method` runs it, `figures` draws α and γ
(the app's ICR tab shows them). `icr_app/assets/icr/<model>/` holds the router shipped for a built-in model.
"""

from icr_app.core.strings import folder_strings
from icr_app.methods.base import MethodSpec
from icr_app.methods.icr.method import ARTEFACT, ICRConfig, ICRMethod, build, neutral

SPEC = MethodSpec(
    name="icr", title="ICR (pretrained router)", config=ICRConfig, build=build, instant=True, neutral=neutral,
    artefact=ARTEFACT, load=ICRMethod.load,
    description="a router trained once on other tasks bends attention along principal ICL directions; "
                "no examples at inference",
    strings=folder_strings(__file__),
)
