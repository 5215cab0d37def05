"""`icl-lab suite`: methods × tasks × seeds, resumable, spread over processes with accelerate, one summary.

    icl-lab suite --tasks antonyms,my_tasks/ --methods zero-shot,few-shot,site --seeds 0,1,2 --out runs/suite
    accelerate launch --multi_gpu --num_processes 4 -m icr_app suite ...   # the same, task × seed units shared out

The unit of work is one task × seed: every method is built and scored in one `evaluate` run, so the latency
ratios are measured side by side. Each finished task × method × seed is written at once to
`OUT/units/TASK/seedS/METHOD.json`; a restarted suite reads those back and runs only what is missing (a method
added later runs beside a fresh zero-shot, whose time its latency ratio needs); `OUT/settings.json` keeps a
folder from mixing units of two settings. Then `OUT/TASK.json` (the eval
JSON over the seeds), `summary.md`, `summary.csv` (per task and method), `methods.csv` (per method), `pooled.csv`
(the methods compared on every task's items at once) and, where plotly is installed, the figures (HTML, and PNG
where kaleido finds a Chrome or Chromium). `run_suite` is the library's `icr_app.suite`, which
`icl-lab suite` calls.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from icr_app import parallel
from icr_app.core.artefacts import private_name
from icr_app.core.loading import dtype_name
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import SHOTS, PromptFormat
from icr_app.core.tasks import HF_PREFIX, Task, TaskError, item_keys, load_task
from icr_app.core.taskspecs import Reported, TaskGroup, group_names, load_group
from icr_app.evaluation import EvalReport, MethodResult, SeedsReport, eval_split, evaluate
from icr_app.methods import entry_config
from icr_app.suite_report import write_summary

TASK_SUFFIXES = (".json", ".jsonl", ".csv", ".tsv")
BASE = "zero-shot"


TaskSource = str | Path | Task


def is_group(source: TaskSource) -> bool:
    """A group of dataset specs is asked for by its name, unless a file or folder of that name is there."""
    return not isinstance(source, Task) and str(source) in group_names() and not Path(source).exists()


def task_sources(sources: Sequence[TaskSource]) -> dict[str, str | Task]:
    """{name: built-in name, file, spec or Task} for built-in task names, task files, folders of them, dataset
    specs (`hf:NAME`), groups of specs and `Task`s. A task is named by its file's stem (a spec by its name, a `Task`
    by its name), which names its results too, so two different ones may not share one; the same one asked for
    twice (a spec in two groups) runs once."""
    found: list[tuple[str, str | Task]] = []
    for item in sources:
        if isinstance(item, Task):
            found.append((item.name, item))
            continue
        path = Path(item)
        if str(item).startswith(HF_PREFIX):
            found.append((str(item).removeprefix(HF_PREFIX), str(item)))
        elif is_group(item):
            found += [(name, HF_PREFIX + name) for name in load_group(str(item)).members]
        elif path.is_dir():
            files = [f for f in sorted(path.iterdir()) if f.suffix in TASK_SUFFIXES]
            if not files:
                raise TaskError("task.empty_folder", folder=item, suffixes=", ".join(TASK_SUFFIXES))
            found += [(f.stem, str(f)) for f in files]
        else:
            found.append((path.stem if path.suffix in TASK_SUFFIXES else str(item), str(item)))
    out: dict[str, str | Task] = {}
    twice = sorted({name for name, src in found if out.setdefault(name, src) != src})
    if twice:
        raise TaskError("task.named_twice", names=", ".join(twice))
    return out


def groups_among(sources: Sequence[TaskSource]) -> list[TaskGroup]:
    return [load_group(str(s)) for s in sources if is_group(s)]


def group_parts(sources: Sequence[TaskSource]) -> dict[str, list[str]]:
    """The parts of the groups among `sources` ("in-domain": [...]), each named "group/part" when there are
    several groups; the summary reports a mean per part. With several groups, a group of several parts also gets
    "group/all", its own overall (the run's overall then spans every group, which is not what a paper reports)."""
    groups = groups_among(sources)
    if len(groups) == 1:
        return {part: list(names) for part, names in groups[0].parts.items()}
    parts: dict[str, list[str]] = {}
    for g in groups:
        parts |= {f"{g.name}/{part}": list(names) for part, names in g.parts.items()}
        if len(g.parts) > 1:
            parts[f"{g.name}/all"] = [t for names in g.parts.values() for t in names]
    return parts


def group_reported(sources: Sequence[TaskSource]) -> list[tuple[str, Reported]]:
    """The papers' own numbers of the groups among `sources`, each with its group's name."""
    return [(g.name, r) for g in groups_among(sources) for r in g.reported]


def read_tasks(sources: Sequence[TaskSource]) -> tuple[dict[str, Task], dict[str, str]]:
    """Every task read now, so a bad one stops every process here, not one process while the others wait for it.
    A group's member whose data cannot be had is left out and returned with why (the summary marks it); any
    other task that cannot be read stops the run."""
    grouped = {name for names in group_parts(sources).values() for name in names}
    read, unavailable = {}, {}
    for name, src in task_sources(sources).items():
        try:
            read[name] = src if isinstance(src, Task) else load_task(src)
        except TaskError as err:
            if name not in grouped or err.code != "spec.no_data":
                raise
            unavailable[name] = str(err)
    return read, unavailable


def unit_path(out: Path, task: str, seed: int, method: str) -> Path:
    return out / "units" / task / f"seed{seed}" / f"{method}.json"


def missing(out: Path, task: str, seed: int, methods: list[str]) -> list[str]:
    return [m for m in methods if not unit_path(out, task, seed, m).exists()]


@dataclass(frozen=True)
class Run:
    """What every unit of one suite shares: the methods (entries) with their configs and the evaluation settings."""

    methods: list[str]
    configs: dict[str, Any]
    out: Path
    n_test: int
    shots: int
    batch_size: int
    progress: Progress
    prompt_format: PromptFormat = "plain"


def run_unit(lm: LoadedModel, name: str, task: Task, seed: int, todo: list[str], run: Run) -> list[dict[str, Any]]:
    """Evaluate one task × seed's unfinished methods and write each as its unit; returns the unit records."""
    entries = todo + [BASE] if BASE in run.methods and BASE not in todo else todo
    rep = evaluate(lm, task, entries, n_test=run.n_test, seed=seed, shots=run.shots, batch_size=run.batch_size,
                   configs=run.configs, progress=run.progress, prompt_format=run.prompt_format)
    records = [{"task": name, "model": rep.model, "n_test": rep.n_test, "seed": seed, "kind": rep.kind,
                "items": rep.items, "method": m, "result": asdict(rep.methods[m])} for m in todo]
    for rec in records:
        save(run.out, rec)
    return records


def write_whole(path: Path, text: str) -> None:
    """A file is whole or absent, never read half-written: by an interrupted run's restart, or by another
    process while this one writes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = private_name(path)
    tmp.write_text(text)
    tmp.replace(path)


def save(out: Path, rec: dict[str, Any]) -> None:
    write_whole(unit_path(out, rec["task"], rec["seed"], rec["method"]), json.dumps(rec))


def task_report(run: Run, name: str, task: Task, seeds: list[int]) -> dict[str, Any]:
    """A task's eval JSON over the seeds, from its unit files. Each seed's test split is drawn again (it follows
    the seed) to name the items, so the pooled tests know an item two seeds drew; the names a unit recorded (units
    from before they were recorded have none) must be those, or the task's data changed under the units."""
    runs = []
    for seed in seeds:
        recs = [json.loads(unit_path(run.out, name, seed, m).read_text()) for m in run.methods]
        head = recs[0]
        results = {r["method"]: MethodResult(**r["result"]) for r in recs}
        items = item_keys(eval_split(task, run.n_test, seed, run.shots)[1])
        if any(r.get("items", items) != items or len(r["result"]["correct"]) not in (0, len(items)) for r in recs):
            raise ValueError(f"{unit_path(run.out, name, seed, run.methods[0]).parent}: the units were scored on "
                             "other test items than the task's split now gives: its data changed since they were "
                             "made; use another output folder (--out)")
        runs.append(EvalReport(name, head["model"], head["n_test"], seed, head["kind"], results, items=items,
                               prompt_format=run.prompt_format))
    return SeedsReport(runs).to_json()


def settings(lm: LoadedModel, run: Run) -> dict[str, Any]:
    """What a unit's numbers depend on besides its task, method and seed (JSON-shaped, to compare with a file)."""
    configs = {m: asdict(run.configs[m]) for m in run.methods}
    return json.loads(json.dumps({"model": lm.name, "dtype": dtype_name(lm.dtype), "n_test": run.n_test,
                                  "shots": run.shots, "prompt_format": run.prompt_format, "configs": configs},
                                 default=str))


def check_settings(out: Path, current: dict[str, Any]) -> None:
    """Refuse to mix units made under other settings into one output folder; record these (with any methods
    new to it) in OUT/settings.json."""
    path = out / "settings.json"
    # a folder from before the prompt format was recorded holds plain prompts' units
    old = {"prompt_format": "plain", **json.loads(path.read_text())} if path.exists() else {"configs": {}}
    changed = [key for key in ("model", "dtype", "n_test", "shots", "prompt_format")
               if key in old and old[key] != current[key]]
    changed += [f"{m}'s config" for m, c in current["configs"].items() if old["configs"].get(m, c) != c]
    if changed:
        raise ValueError(f"{out} holds results made with another {', '.join(changed)}: use another output folder "
                         "(--out)")
    if parallel.is_main():
        write_whole(path, json.dumps({**current, "configs": {**old["configs"], **current["configs"]}}, indent=2))


def run_suite(lm: LoadedModel, tasks: Sequence[TaskSource], methods: Sequence[str], *, out: Path,
              seeds: Sequence[int] = (0,), n_test: int = 100, shots: int = SHOTS, batch_size: int = 16,
              configs: dict[str, Any] | None = None, progress: Progress = no_progress,
              prompt_format: PromptFormat = "plain") -> dict[str, dict[str, Any]]:
    """Run the unfinished units (this process's share of them under `accelerate launch`); the first process then
    writes every task's JSON and the summary. Returns {task: report} there, {} elsewhere. `configs` maps an entry
    to its config (default: the entry's, `methods.entry_config`)."""
    methods, seeds = list(methods), [int(s) for s in seeds]
    configs = configs or {}
    run = Run(methods, {m: configs.get(m) or entry_config(m) for m in [*methods, BASE]}, Path(out), n_test, shots,
              batch_size, progress, prompt_format)
    run.out.mkdir(parents=True, exist_ok=True)
    check_settings(run.out, settings(lm, run))
    read, unavailable = read_tasks(tasks)
    todo = [(name, seed) for name in read for seed in seeds if missing(run.out, name, seed, methods)]
    parallel.barrier()  # every process has listed the same units before any writes one
    records = []
    for name, seed in progress(parallel.share(todo), desc="suite: task × seed units"):
        records += run_unit(lm, name, read[name], seed, missing(run.out, name, seed, methods), run)
    records = parallel.gather(records)
    if not parallel.is_main():
        return {}
    for rec in records:  # other machines' units, where the output folder is not shared
        if not unit_path(run.out, rec["task"], rec["seed"], rec["method"]).exists():
            save(run.out, rec)
    reports = {name: task_report(run, name, task, seeds) for name, task in read.items()}
    for name, rep in reports.items():
        (run.out / f"{name}.json").write_text(json.dumps(rep, indent=2))
    write_summary(run.out, reports, methods, seeds, parts=group_parts(tasks), unavailable=unavailable,
                  reported=group_reported(tasks))
    return reports
