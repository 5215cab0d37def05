"""The analysis registry: every study of the mechanism ICL Lab offers beside the methods, one entry each.

An analysis registers here with its name, title and description, and names its parts as "module:function",
imported only when used (so `eval` never imports gradio): `commands` adds its CLI subcommands, `views` computes
its views (its results with the app's defaults, as JSON), `(lm, task, progress) -> {view: data}`, which
`icl-lab prebuild` ships for the built-in tasks and the app's tabs read back. The CLI and `prebuild` list
analyses from `REGISTRY`; the app lists its tabs for them itself (`app.tabs`). Adding an analysis is its own
folder plus one line in `_SPECS`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AnalysisSpec:
    """One registered analysis (see the module's docstring for `commands` and `views`)."""

    name: str
    title: str
    description: str
    commands: str | None = None
    views: str | None = None


_SPECS = [
    AnalysisSpec("anchors", "Label words as anchors",
                 "information flow through the demonstrations' label words (saliency), isolating them, re-weighting "
                 "them, compressing the demonstrations into them, and reading confusions off them",
                 commands="icr_app.analyses.anchors.commands:add_commands",
                 views="icr_app.analyses.anchors.cached:default_views"),
    AnalysisSpec("rank1", "ICL as a rank-1 weight update",
                 "the demonstrations' effect at the query rewritten exactly as a rank-1 update of one block's MLP "
                 "weights: the identity's error per layer, its singular values, how it grows with demonstrations",
                 commands="icr_app.analyses.rank1.commands:add_commands",
                 views="icr_app.analyses.rank1.cached:default_views"),
]
REGISTRY: dict[str, AnalysisSpec] = {spec.name: spec for spec in _SPECS}
