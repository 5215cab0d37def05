"""The method registry: every way of answering a query that ICL Lab compares, one entry each.

A method registers once, here, with its name, config dataclass, builder and a short description. The
`eval` flags (one per config field), the app's answer panels and Evaluate tab, and the benchmarks all list
methods from `REGISTRY`. Adding a method is its own module or folder plus one line in `_SPECS`.
"""

from __future__ import annotations

from icr_app.methods import few_shot, function_vector, i2cl, icr, icv, lora, site, task_vector, zero_shot
from icr_app.methods.base import MethodSpec

_SPECS = [zero_shot.SPEC, few_shot.SPEC, site.SPEC, icr.SPEC, lora.SPEC, task_vector.SPEC, function_vector.SPEC,
          i2cl.SPEC, icv.SPEC]
REGISTRY: dict[str, MethodSpec] = {spec.name: spec for spec in _SPECS}
DEFAULT_PANELS = ("zero-shot", "few-shot", "site", "icr")


def get_spec(name: str) -> MethodSpec:
    if name not in REGISTRY:
        raise ValueError(f"unknown method '{name}'; available: {', '.join(REGISTRY)}")
    return REGISTRY[name]


def parse_entry(entry: str) -> tuple[MethodSpec, str | None]:
    """A method list entry, "site" or "site@paper" (a method from one of its presets), as (spec, preset), so
    one run can compare two settings of a method under two names."""
    name, _, preset = entry.partition("@")
    spec = get_spec(name)
    if preset and preset not in spec.presets:
        choices = ", ".join(f"{name}@{p}" for p in spec.presets) or "none"
        raise ValueError(f"'{entry}': {name} has no preset '{preset}' (presets: {choices})")
    return spec, preset or None


def entry_config(entry: str) -> object:
    """The config an entry starts from: its preset's, or the method's defaults."""
    spec, preset = parse_entry(entry)
    return spec.presets[preset][1]() if preset else spec.config()
