"""SITE (Park et al., 2025): task embeddings from per-head attention outputs with a learned soft head selection.

`method` builds and runs it, `train` learns the head weights, `inject` is the intervention, `artefact` is a
built task and its file, `figures` draws the head map
and sums it up for the app's tab (`SPEC.view`).
"""

from icr_app.core.strings import folder_strings
from icr_app.methods.base import BuildControl, MethodView
from icr_app.methods.site.method import FIRST_TOKEN, PAPER, SiteConfig, SiteMethod, build, neutral
from icr_app.methods.state import stateful_spec

SPEC = stateful_spec(
    SiteMethod, title="SITE (task embedding)", config=SiteConfig, build=build,
    presets={"paper": PAPER, "first-token": FIRST_TOKEN}, neutral=neutral,
    description="per-head task embeddings from few-shot prompts, mixed in at the last token by learned head weights",
    view=MethodView("site", "icr_app.methods.site.figures:alpha_heatmap", "icr_app.methods.site.figures:summary",
                    build=BuildControl("steps", 20, 400, "site.steps", "site.build", "site.load", "site.building")),
    strings=folder_strings(__file__),
)
