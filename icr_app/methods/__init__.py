"""The method registry: every way of answering a query that ICL Lab compares, one entry each.

A method is one folder (config, build, intervention, state, figures, its words in `strings.yaml`, its doc page in
README.md) whose `SPEC` is an entry point of the group `icl_lab.methods`. ICL Lab's own are declared in its
pyproject.toml exactly as another package declares its own, and `REGISTRY` holds all of them, in that order: the
`eval` flags (one per config field), the app's answer panels, tabs and Evaluate tab, and the benchmarks list
methods from it. A method made in a session, in no package, joins through `register` (`icr_app.register_method`).
"""

from __future__ import annotations

import dataclasses
import re
import sys
import warnings
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from icr_app.core.artefacts import ArtefactError, artefact_kind
from icr_app.core.errors import UserError
from icr_app.core.models import LoadedModel
from icr_app.core.tasks import Task
from icr_app.methods.base import KINDS, Method, MethodSpec, build_spec

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

GROUP = "icl_lab.methods"  # the entry-point group a method's package declares its SPEC in
DISTRIBUTION = "icl-lab"
REGISTRY: dict[str, MethodSpec] = {}
DEFAULT_PANELS = ("zero-shot", "few-shot", "site", "icr")
# The serving stacks' formats a built method may be exported to (`MethodSpec.exports`), each with the error code
# that says why a method has no export to it (docs/elsewhere.md)
FORMATS = {"peft": "export.not_peft", "llama-cpp": "export.not_control_vector", "steered": "export.not_steered"}


class ExportError(UserError):
    """A method that cannot be written in the format asked for, or a format ICL Lab does not know."""


def register(spec: MethodSpec) -> None:
    """Add `spec` to `REGISTRY`, refusing a name already taken (ValueError) and a config that is not a dataclass
    with help text on every field (TypeError): its fields become the CLI's flags and the app's settings."""
    if spec.name in REGISTRY:
        raise ValueError(f"a method named '{spec.name}' is already registered; choose another name")
    if "@" in spec.name or "," in spec.name:
        raise ValueError(f"'{spec.name}': a method's name may not hold '@' or ',' (they separate presets and entries)")
    if not dataclasses.is_dataclass(spec.config) or not isinstance(spec.config, type):
        raise TypeError(f"{spec.name}: its config must be a dataclass (the class itself), not {spec.config!r}")
    bare = [f.name for f in dataclasses.fields(spec.config) if not f.metadata.get("help")]
    if bare:
        raise TypeError(f"{spec.name}: config field(s) {', '.join(bare)} have no help text "
                        "(field(default=..., metadata={'help': '...'}))")
    REGISTRY[spec.name] = spec


def _distribution(point: EntryPoint) -> str:
    name = point.dist.name if point.dist is not None else ""
    return re.sub(r"[-_.]+", "-", name).lower()


def shipped_entry_points() -> list[EntryPoint]:
    """ICL Lab's own methods as its pyproject.toml declares them: read from that file where the package runs from
    its source tree (a clone, the Space, the tests: nothing installed, or installed metadata that may be older than
    the tree), else from the installed distribution's metadata."""
    pyproject = Path(__file__).parents[2] / "pyproject.toml"
    project = tomllib.loads(pyproject.read_text())["project"] if pyproject.is_file() else {}
    if project.get("name") == DISTRIBUTION:
        return [EntryPoint(name, value, GROUP) for name, value in project["entry-points"][GROUP].items()]
    return [point for point in entry_points(group=GROUP) if _distribution(point) == DISTRIBUTION]


def plugin_entry_points() -> list[EntryPoint]:
    """The methods other installed packages declare, by name."""
    found = [point for point in entry_points(group=GROUP) if _distribution(point) != DISTRIBUTION]
    return sorted(found, key=lambda point: point.name)


def _load(point: EntryPoint) -> MethodSpec:
    spec = point.load()
    if not isinstance(spec, MethodSpec) or spec.name != point.name:
        raise TypeError(f"entry point '{point.name} = {point.value}' of {GROUP} must name the MethodSpec of a method "
                        f"called '{point.name}'; it names {spec!r}")
    return spec


def _discovered() -> list[MethodSpec]:
    """Every declared method, baselines first (zero-shot, the reference every other is compared with, before all),
    then implicit ICL, then fine-tuning, by name within each: one order whether the entry points come from
    pyproject.toml or from installed metadata (which keeps no order)."""
    specs = [_load(point) for point in shipped_entry_points()]
    for point in plugin_entry_points():
        try:  # another package's method that cannot load costs that method, not ICL Lab
            specs.append(_load(point))
        except Exception as err:  # noqa: BLE001 (whatever its import raises)
            warnings.warn(f"method '{point.name}' from {point.value} was not loaded: {err}", stacklevel=2)
    return sorted(specs, key=lambda spec: (KINDS.index(spec.kind), spec.name != "zero-shot", spec.name))


for _spec in _discovered():
    register(_spec)


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


def entry_config(entry: str) -> Any:
    """The config an entry starts from (an instance of its method's config dataclass): its preset's, or the
    method's defaults."""
    spec, preset = parse_entry(entry)
    return spec.presets[preset][1]() if preset else spec.config()


def build_method(lm: LoadedModel, task: Task, entry: str, config: Any = None, **context: Any) -> Method:
    """The one way a method is built, whoever asks (the app's Build button and tabs, `eval`, `prebuild`, the
    Python API): method `entry` ("site", "site@paper") from `task` with `config` (default: the entry's), through
    `base.build_spec` (context, timing, progress, cancel, errors; `context`: its keywords)."""
    spec, _ = parse_entry(entry)
    return build_spec(spec, lm, task, entry_config(entry) if config is None else config, entry=entry, **context)


def load_method(path: str | Path, lm: LoadedModel) -> Method:
    """The built method a file holds (any registered method's `Method.save`), or a serving stack's files that a
    method's export reads back (a PEFT adapter folder), ready to answer on `lm`; an `ArtefactError` when it is not
    such a file, was made for another model, or holds what the method cannot represent."""
    for spec in REGISTRY.values():
        for export in spec.exports.values():
            if export.load is not None and export.reads is not None and export.reads(Path(path)):
                return export.load(Path(path), lm)
    kind = artefact_kind(path)
    for spec in REGISTRY.values():
        if spec.artefact == kind and spec.load is not None:
            return spec.load(Path(path), lm)
    raise ArtefactError("artefact.unknown_kind", file=Path(path).name, kind=kind)


def export_method(method: Method, to: str, path: str | Path) -> Path:
    """Write `method` as format `to`'s files at `path` (one of `FORMATS`), through its spec's export; an
    `ExportError` saying why when the method has none to that format."""
    if to not in FORMATS:
        raise ExportError("export.unknown_format", format=to, formats=", ".join(FORMATS))
    spec = REGISTRY.get(method.name)
    export = None if spec is None else spec.exports.get(to)
    if export is None:
        able = [name for name, s in REGISTRY.items() if to in s.exports]
        raise ExportError(FORMATS[to], method=method.name, methods=", ".join(able) or "none")
    return export.write(method, Path(path))
