"""ICR, in-context routing: a router trained once biases attention along principal ICL directions (PIDs).

`pids` extracts the directions, `routing` is the attention edit, `router` the network and its artefact,
`train` trains it, `method` runs it, `commands` adds `icr train` / `icr ensemble`, `figures` draws α and γ,
and `panel` is its app tab. `icr_app/assets/icr/<model>/` holds the router shipped for a built-in model.
"""

from icr_app.methods.base import MethodSpec
from icr_app.methods.icr.method import ICRConfig, build, neutral

SPEC = MethodSpec(
    name="icr", title="ICR (pretrained router)", config=ICRConfig, build=build, instant=True, neutral=neutral,
    description="a router trained once on other tasks bends attention along principal ICL directions; "
                "no examples at inference",
    commands="icr_app.methods.icr.commands:add_commands", tab="icr_app.methods.icr.panel:build_tab",
)
