"""The analysis registry: every study of the mechanism ICL Lab offers beside the methods, one entry each.

An analysis registers here with its name, title and description, and names its parts as "module:function",
imported only when used: `views` computes its views (its results with the app's defaults, as JSON),
`(lm, task, progress) -> {view: data}`, which `icl-lab prebuild` ships for the built-in tasks and the app's tabs
read back. `prebuild` lists analyses from `REGISTRY`; the CLI (`icr_app.cli`) and the app (`app.tabs`) name
their commands and tabs themselves. Adding an analysis is its own folder plus one line in `_SPECS`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AnalysisSpec:
    """One registered analysis (see the module's docstring for `views`)."""

    name: str
    title: str
    description: str
    views: str | None = None


_SPECS = [
    AnalysisSpec("anchors", "Label words as anchors",
                 "information flow through the demonstrations' label words (saliency), isolating them, re-weighting "
                 "them, compressing the demonstrations into them, and reading confusions off them",
                 views="icr_app.analyses.anchors.cached:default_views"),
    AnalysisSpec("rank1", "ICL as a rank-1 weight update",
                 "the demonstrations' effect at the query rewritten exactly as a rank-1 update of one block's MLP "
                 "weights: the identity's error per layer, its singular values, how it grows with demonstrations",
                 views="icr_app.analyses.rank1.cached:default_views"),
]
REGISTRY: dict[str, AnalysisSpec] = {spec.name: spec for spec in _SPECS}
