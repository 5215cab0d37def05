"""ICV (Liu et al., 2024): the first principal direction of the demonstrations' latent shifts per layer, added
at every layer and position with a norm-preserving rescale, its strength chosen on held-out examples.

`method` builds and runs it (latent shifts, directions, injection, λ sweep), `artefact` is a built one and its
file, `figures` draws the sweep and sums it up for the app's tab (`SPEC.view`).
"""

from icr_app.core.strings import folder_strings
from icr_app.methods.base import MethodView
from icr_app.methods.icv.method import ICVConfig, ICVMethod, build, neutral
from icr_app.methods.state import stateful_spec

SPEC = stateful_spec(
    ICVMethod, title="ICV (in-context vector)", config=ICVConfig, build=build, kind="implicit", neutral=neutral,
    description="the demonstrations' principal latent shift per layer, added at every position, norm kept",
    view=MethodView("icv", "icr_app.methods.icv.figures:sweep_figure", "icr_app.methods.icv.figures:summary"),
    strings=folder_strings(__file__),
)
