"""The analysis registry: every study of the mechanism ICL Lab offers beside the methods, one entry each.

An analysis registers here with its name, title and description, and names its parts as "module:function",
imported only when used: `views` computes its views (its results with the app's defaults, as JSON),
`(lm, task, progress) -> {view: data}`, which `icl-lab prebuild` ships for the built-in tasks and the app's tabs
read back. `prebuild` lists analyses from `REGISTRY`; the CLI (`icr_app.cli`) and the app (`app.tabs`) name
their commands and tabs themselves. Adding an analysis is its own folder (its words in its strings.yaml) plus
one entry in `_SPECS`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from icr_app.core.strings import Strings, folder_strings

_HERE = Path(__file__).parent


@dataclass(frozen=True)
class AnalysisSpec:
    """One registered analysis (see the module's docstring for `views`); `strings`: its words on the page, per
    language, from its folder's strings.yaml."""

    name: str
    title: str
    description: str
    views: str | None = None
    strings: Strings = field(default_factory=dict)


_SPECS = [
    AnalysisSpec("anchors", "Label words as anchors",
                 "information flow through the demonstrations' label words (saliency), isolating them, re-weighting "
                 "them, compressing the demonstrations into them, and reading confusions off them",
                 views="icr_app.analyses.anchors.cached:default_views",
                 strings=folder_strings(_HERE / "anchors" / "__init__.py")),
    AnalysisSpec("rank1", "ICL as a rank-1 weight update",
                 "the demonstrations' effect at the query rewritten exactly as a rank-1 update of one block's MLP "
                 "weights: the identity's error per layer, its singular values, how it grows with demonstrations",
                 views="icr_app.analyses.rank1.cached:default_views",
                 strings=folder_strings(_HERE / "rank1" / "__init__.py")),
]
REGISTRY: dict[str, AnalysisSpec] = {spec.name: spec for spec in _SPECS}
