"""SITE (Park et al., 2025): task embeddings from per-head attention outputs with a learned soft head selection.

`method` builds and runs it, `train` learns the head weights, `inject` is the intervention, `artefact` is a
built task and its file, `commands` adds `site build`, `figures` draws the head map and `panel` is its app tab.
"""

from icr_app.methods.site.method import FIRST_TOKEN, PAPER, SiteConfig, SiteMethod, build, neutral
from icr_app.methods.state import stateful_spec

SPEC = stateful_spec(
    SiteMethod, title="SITE (task embedding)", config=SiteConfig, build=build,
    presets={"paper": PAPER, "first-token": FIRST_TOKEN}, neutral=neutral,
    description="per-head task embeddings from few-shot prompts, mixed in at the last token by learned head weights",
    commands="icr_app.methods.site.commands:add_commands", tab="icr_app.methods.site.panel:build_tab",
)
