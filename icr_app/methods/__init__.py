"""The method registry: every way of answering a query that ICL Lab compares, one entry each.

A method registers once, here, with its name, config dataclass, builder and a short description. The
`eval` flags (one per config field), the app's answer panels and Evaluate tab, and the benchmarks all list
methods from `REGISTRY`. Adding a method is its own module or folder plus one line in `_SPECS`.
"""

from __future__ import annotations

from icr_app.methods import few_shot, icr, site, zero_shot
from icr_app.methods.base import MethodSpec

_SPECS = [zero_shot.SPEC, few_shot.SPEC, site.SPEC, icr.SPEC]
REGISTRY: dict[str, MethodSpec] = {spec.name: spec for spec in _SPECS}
DEFAULT_PANELS = ("zero-shot", "few-shot", "site", "icr")


def get_spec(name: str) -> MethodSpec:
    if name not in REGISTRY:
        raise ValueError(f"unknown method '{name}'; available: {', '.join(REGISTRY)}")
    return REGISTRY[name]
