"""Tasks described as data: a Hugging Face dataset, its splits, columns, verbalizer and prompt (a task spec).

A spec is a YAML file in the package (`assets/taskspecs/<name>.yaml`, see docs/tasks.md) and is asked for as
`hf:<name>`; a group (`assets/taskgroups/<group>.yaml`) names specs in ordered parts, such as a paper's
in-domain and out-of-domain sets. The rows come from a local copy when there is one,
`$ICL_LAB_DATA/<name>/` (a dataset saved with `save_to_disk`, or one data file per split named after the
split), else from the hub through `datasets`. Whatever does not match its spec (a missing column, a label the
verbalizer lacks, an empty split) is a `TaskError` naming the spec and the field.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from platformdirs import user_data_dir

from icr_app.core.errors import TaskError
from icr_app.core.paths import ASSETS
from icr_app.core.prompts import Template

SPEC_DIR = ASSETS / "taskspecs"
GROUP_DIR = ASSETS / "taskgroups"
DATA_ENV = "ICL_LAB_DATA"
# Methods learn from the demonstration split: a fixed sample of it keeps every build's cost bounded on the
# large sets (AG News, DBpedia) while leaving far more examples than any method uses.
DEMO_POOL = 1000
DATA_FILES = (".jsonl", ".json", ".csv", ".parquet")
SOURCE_FILE = "SOURCE.json"  # where a local copy came from (bench/paper_data.py writes it): beside the splits, not one
REQUIRED = ("name", "title", "dataset", "demos_split", "test_split", "input", "label", "verbalizer", "template",
            "reference")


@dataclass(frozen=True)
class TaskSpec:
    name: str
    title: str
    dataset: str  # the hub id, as `datasets.load_dataset` takes it
    config: str | None
    demos_split: str
    test_split: str
    input: str  # str.format over a row: how the columns join into one input
    label: str
    verbalizer: dict[str, str]  # str(label value) -> answer word; its values are the label set, in order
    template: Template
    reference: str


@dataclass(frozen=True)
class Reported:
    """A mean the group's paper reports for one of its own models: printed beside the suite's table as a
    reference, never as a like-for-like comparison (other models, other sizes)."""

    model: str
    method: str
    overall: float  # mean accuracy over the group's sets, in points
    collapses: int | None  # the paper's count of sets below zero-shot, where it gives one
    source: str


@dataclass(frozen=True)
class TaskGroup:
    name: str
    title: str
    reference: str
    parts: dict[str, tuple[str, ...]]
    reported: tuple[Reported, ...] = ()

    @property
    def members(self) -> list[str]:
        return [name for names in self.parts.values() for name in names]


def spec_names() -> list[str]:
    return sorted(p.stem for p in SPEC_DIR.glob("*.yaml"))


def group_names() -> list[str]:
    return sorted(p.stem for p in GROUP_DIR.glob("*.yaml"))


def _read_yaml(path: Path, what: str, name: str, known: list[str]) -> dict[str, Any]:
    if not path.is_file():
        raise TaskError(f"{what}.unknown", name=name, names=", ".join(known))
    try:
        fields = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise TaskError("spec.bad_yaml", file=path.name, err=str(err)) from None
    if not isinstance(fields, dict):
        raise TaskError("spec.bad_yaml", file=path.name, err="not a mapping of fields")
    return fields


def load_spec(name: str) -> TaskSpec:
    """The spec `name` (without the `hf:`), checked field by field."""
    fields = _read_yaml(SPEC_DIR / f"{name}.yaml", "spec", name, spec_names())
    return parse_spec(fields, name)


def parse_spec(fields: dict[str, Any], name: str) -> TaskSpec:
    def bad(field: str, why: str) -> TaskError:
        return TaskError("spec.bad_field", spec=name, field=field, why=why)

    for field in REQUIRED:
        if field not in fields:
            raise bad(field, "missing")
    unknown = set(fields) - set(REQUIRED) - {"config"}
    if unknown:
        raise bad(", ".join(sorted(unknown)), "not a spec field")
    verbalizer = fields["verbalizer"]
    if not isinstance(verbalizer, dict) or len(verbalizer) < 2:
        raise bad("verbalizer", "needs a mapping of at least two label values to answers")
    words = {str(k): str(v).strip() for k, v in verbalizer.items()}
    if len(set(words.values())) < len(words) or not all(words.values()):
        raise bad("verbalizer", "answers must be distinct and not blank")
    template = fields["template"]
    if not isinstance(template, dict) or not set(template) <= {"query", "sep"} or "query" not in template:
        raise bad("template", "needs `query` (with {x}) and optionally `sep`")
    try:
        prompt = Template(**template)
    except ValueError as err:
        raise bad("template", str(err)) from None
    return TaskSpec(str(fields["name"]), str(fields["title"]), str(fields["dataset"]), fields.get("config"),
                    str(fields["demos_split"]), str(fields["test_split"]), str(fields["input"]), str(fields["label"]),
                    words, prompt, str(fields["reference"]))


def load_group(name: str) -> TaskGroup:
    fields = _read_yaml(GROUP_DIR / f"{name}.yaml", "group", name, group_names())
    parts = fields.get("parts")
    if not isinstance(parts, dict) or not all(isinstance(v, list) for v in parts.values()):
        raise TaskError("spec.bad_field", spec=name, field="parts", why="needs a mapping of part names to lists")
    group = TaskGroup(name, str(fields.get("title", name)), str(fields.get("reference", "")),
                      {part: tuple(map(str, names)) for part, names in parts.items()},
                      parse_reported(fields.get("reported", []), name))
    missing = [m for m in group.members if m not in spec_names()]
    if missing:
        raise TaskError("spec.bad_field", spec=name, field="parts", why=f"no spec named {', '.join(missing)}")
    return group


def parse_reported(entries: Any, name: str) -> tuple[Reported, ...]:
    """A group's `reported` list: one mapping per (model, method) with its overall mean and source."""
    def bad(why: str) -> TaskError:
        return TaskError("spec.bad_field", spec=name, field="reported", why=why)

    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise bad("needs a list of mappings")
    out = []
    for e in entries:
        if not {"model", "method", "overall", "source"} <= set(e) <= {"model", "method", "overall", "collapses",
                                                                     "source"}:
            raise bad("entries need model, method, overall and source (collapses optional), nothing else")
        if not isinstance(e["overall"], int | float) or not 0 <= e["overall"] <= 100:
            raise bad(f"overall {e['overall']!r} is not a mean in points (0 to 100)")
        collapses = e.get("collapses")
        if collapses is not None and (not isinstance(collapses, int) or collapses < 0):
            raise bad(f"collapses {collapses!r} is not a count")
        out.append(Reported(str(e["model"]), str(e["method"]), float(e["overall"]), collapses, str(e["source"])))
    return tuple(out)


def data_root() -> Path:
    """Where local copies live: $ICL_LAB_DATA, else the user's data folder."""
    return Path(os.environ.get(DATA_ENV) or Path(user_data_dir("icl-lab")) / "data")


def available_specs() -> list[str]:
    """The specs whose local copy is here (the page offers these: it never waits on the hub)."""
    return [name for name in spec_names() if (data_root() / name).is_dir()]


def local_copy(spec: TaskSpec) -> Path | None:
    folder = data_root() / spec.name
    return folder if folder.is_dir() else None


def read_split(spec: TaskSpec, split: str):  # -> datasets.Dataset
    """The split's rows, from the local copy when there is one, else from the hub."""
    import datasets  # heavy; only a spec task needs it

    folder = local_copy(spec)
    where = str(folder) if folder else f"{data_root() / spec.name} (absent) and the hub ({spec.dataset})"
    quiet = not datasets.utils.are_progress_bars_disabled()
    if quiet:  # its per-file bars would bury the run's own progress; the user's setting is restored below
        datasets.utils.disable_progress_bars()
    try:
        if folder is None:
            return datasets.load_dataset(spec.dataset, spec.config, split=split)
        if (folder / "dataset_dict.json").is_file():
            saved = datasets.load_from_disk(str(folder))
            if split not in saved:
                raise TaskError("spec.no_split", spec=spec.name, split=split, where=where, splits=", ".join(saved))
            return saved[split]
        files = [folder / f"{split}{ext}" for ext in DATA_FILES if (folder / f"{split}{ext}").is_file()]
        if not files:
            raise TaskError("spec.no_split", spec=spec.name, split=split, where=where,
                            splits=", ".join(sorted({p.stem for p in folder.iterdir()
                                                     if p.suffix in DATA_FILES and p.name != SOURCE_FILE})))
        where = str(files[0])
        builder = {".jsonl": "json", ".json": "json"}.get(files[0].suffix, files[0].suffix[1:])
        return datasets.load_dataset(builder, data_files=where, split="train")
    except TaskError:
        raise
    except Exception as err:  # the hub unreachable, a corrupt file: say where we looked and why it failed
        raise TaskError("spec.no_data", spec=spec.name, where=where, err=f"{type(err).__name__}: {err}") from None
    finally:
        if quiet:
            datasets.utils.enable_progress_bars()


def read_pairs(spec: TaskSpec) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(input, answer) pairs of the demonstration split (a fixed sample of at most DEMO_POOL) and of the whole
    test split, for `tasks.spec_task`."""
    demos = pairs_of(spec, read_split(spec, spec.demos_split), spec.demos_split, DEMO_POOL)
    return demos, pairs_of(spec, read_split(spec, spec.test_split), spec.test_split)


def pairs_of(spec: TaskSpec, rows, split: str, limit: int | None = None) -> list[tuple[str, str]]:
    """The split's rows as (input, answer) pairs (a fixed sample of `limit` of them when there are more), each
    input joined by the spec's `input` and each label verbalized."""
    if len(rows) == 0:
        raise TaskError("spec.empty_split", spec=spec.name, split=split)
    if spec.label not in rows.column_names:
        raise TaskError("spec.no_column", spec=spec.name, split=split, field="label", column=spec.label,
                        columns=", ".join(rows.column_names))
    outside = sorted({str(v) for v in rows[spec.label]} - set(spec.verbalizer))
    if outside:
        raise TaskError("spec.label_outside", spec=spec.name, split=split, values=", ".join(outside[:5]),
                        labels=", ".join(spec.verbalizer))
    if limit is not None and len(rows) > limit:
        rows = rows.select(sorted(random.Random(0).sample(range(len(rows)), limit)))
    return [(_join(spec, row, split), spec.verbalizer[str(row[spec.label])]) for row in rows]


def _join(spec: TaskSpec, row: dict[str, Any], split: str) -> str:
    try:
        text = spec.input.format(**row)
    except (KeyError, IndexError, TypeError, ValueError) as err:
        raise TaskError("spec.no_column", spec=spec.name, split=split, field="input", column=str(err),
                        columns=", ".join(row)) from None
    return text.strip()
