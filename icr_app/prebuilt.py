"""Prebuilt results for the built-in tasks, so the app answers at first sight.

For a built-in model and each built-in task, `icl-lab prebuild` builds every method that learns from the
examples (on the whole task, as the app's Build button does) and saves its artefact, and computes each
mechanism view with the app's default settings, and the answers of every method it can serve to the task's
one-click query (`example_query`); all ship as package data under `icr_app/assets/prebuilt/<model>/<task>/`.
The app loads them when a visitor picks that task, so the panels and tabs answer before any model work, and
every tab keeps a button to recompute on the visitor's own settings. Everything is checked against the loaded
model's fingerprint, so a file made for another model is never used.

    icl-lab prebuild --model smollm2-135m [--tasks sentiment,antonyms] [--out DIR]
"""

from __future__ import annotations

import functools
import json
import time
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypedDict

from icr_app.analyses import REGISTRY as ANALYSES
from icr_app.core.artefacts import ArtefactError
from icr_app.core.models import LoadedModel
from icr_app.core.paths import ASSETS, resolve
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import SHOTS
from icr_app.core.tasks import DEFAULT_TASK, Task, builtin_names, builtin_task
from icr_app.methods import REGISTRY, build_method
from icr_app.methods.base import BuildError, Method, Prediction

PREBUILT = ASSETS / "prebuilt"
VIEWS = "views.json"
ANSWERS = "answers.json"
SEED = 0
DEFAULT_QUERY = "An absolute joy from start to finish."  # the default task's one-click query


class EvaluateDefaults(TypedDict):
    methods: list[str]
    n_test: int


EVALUATE: EvaluateDefaults = {"methods": ["zero-shot", "few-shot"], "n_test": 40}  # the Evaluate tab's defaults


def folder(lm: LoadedModel, task: str, root: Path | None = None) -> Path:
    return (root or PREBUILT) / lm.name / task


def stateful() -> list[str]:
    """The registered methods that learn from the examples and can be saved."""
    return [name for name, spec in REGISTRY.items() if not spec.instant and spec.artefact is not None]


def load_methods(lm: LoadedModel, task: str, root: Path | None = None) -> dict[str, Method]:
    """The prebuilt methods of `task` for this model; a missing file or one for another model is skipped."""
    out: dict[str, Method] = {}
    for name in stateful():
        path, load = folder(lm, task, root) / f"{name}.safetensors", REGISTRY[name].load
        if load is not None and path.is_file():
            try:
                out[name] = load(path, lm)
            except ArtefactError:
                continue
            out[name].shipped = True
    return out


@functools.lru_cache(maxsize=64)
def _read_json(path: Path, mtime_ns: int) -> dict[str, Any]:
    return json.loads(path.read_text())


def shipped_json(lm: LoadedModel, task: str, file: str, root: Path | None = None) -> dict[str, Any] | None:
    """One shipped JSON file of `task` made for this model (None when missing or made for another model); read
    once per version of the file, since every pick of the task asks for it again, so callers share it and
    must not change it."""
    path = folder(lm, task, root) / file
    if not path.is_file():
        return None
    data = _read_json(path, path.stat().st_mtime_ns)
    return data if data.get("fingerprint") == lm.fingerprint else None


def load_views(lm: LoadedModel, task: str, root: Path | None = None) -> dict[str, Any]:
    """The cached mechanism views of `task` for this model ({} when there are none)."""
    data = shipped_json(lm, task, VIEWS, root)
    return data["views"] if data else {}


@functools.cache
def example_query(name: str) -> str:
    """A one-click query for a built-in task: its last example's input (the default task's is DEFAULT_QUERY)."""
    return DEFAULT_QUERY if name == DEFAULT_TASK else builtin_task(name).inputs[-1]


def is_builtin(task: Task) -> bool:
    """Whether `task` is a built-in task as shipped (an upload or an edited table with its name is not)."""
    return task.name in builtin_names() and task == builtin_task(task.name)


def instant_method(lm: LoadedModel, task: Task, name: str, shots: int = SHOTS, seed: int = SEED) -> Method:
    """Method `name`, one that needs no build (zero-shot, few-shot, ICR), made for answering on `task`."""
    return build_method(lm, task, name, seed=seed, shots=shots)


@dataclass(frozen=True)
class Answer:
    """One method's answer to one query, the seconds it took and what the method keeps and trained; `shipped`
    when it was read from the package's prebuilt answers (timed when they were made) rather than computed here."""

    prediction: Prediction
    seconds: float
    stored_parameters: int = 0
    trainable_parameters: int = 0
    build_s: float = 0.0
    shipped: bool = False


def timed_answer(method: Method, query: str) -> Answer:
    t0 = time.perf_counter()
    pred = method.predict([query])[0]
    return Answer(pred, time.perf_counter() - t0, method.stored_parameters, method.trainable_parameters,
                  method.build_s)


def compute_answers(lm: LoadedModel, task: Task, methods: dict[str, Method]) -> dict[str, Any]:
    """The answers to the task's one-click query of every method that needs no build and of the prebuilt
    `methods`, with the app's default shots and seed, as JSON."""
    query, answers = example_query(task.name), {}
    for name, spec in REGISTRY.items():
        try:
            method = instant_method(lm, task, name) if spec.instant else methods.get(name)
            if method is not None:
                answers[name] = asdict(timed_answer(method, query))
        except Exception as err:  # a method that cannot serve the task ships no answer; the app says why
            print(f"{task.name}: {name} has no shipped answer: {err}")
    return {"fingerprint": lm.fingerprint, "query": query, "shots": SHOTS, "seed": SEED, "answers": answers}


def shipped_answer(lm: LoadedModel, task: Task, name: str, query: str, shots: int, seed: int,
                   method: Method | None = None, root: Path | None = None) -> Answer | None:
    """The shipped answer of method `name` to `query`, when it is exactly what computing it here would answer:
    a built-in task as shipped, a method that needs no build or the prebuilt one (`method`, the visitor's), the
    query and settings the answers were made with, and this model (None otherwise). A method that needs no build
    is not even made: the ICR router alone takes 3 s to load at first."""
    if not (REGISTRY[name].instant or (method is not None and method.shipped)):
        return None
    data = shipped_json(lm, task.name, ANSWERS, root)
    if data is None or (data["query"], data["shots"], data["seed"]) != (query, int(shots), int(seed)):
        return None
    kept = data["answers"].get(name)
    if kept is None or not is_builtin(task):  # last: it reads the task's file, and most answers stop earlier
        return None
    return Answer(**{**kept, "prediction": Prediction(**kept["prediction"]), "shipped": True})


def compute_views(lm: LoadedModel, task: Task, progress: Progress = no_progress) -> dict[str, Any]:
    """Each mechanism tab's result with the app's default settings, as JSON. An analysis that cannot serve the
    task (the anchors' when two labels share a first token) ships nothing for it; the others still ship, and its
    tab says why when asked to compute."""
    from icr_app.evaluation import evaluate

    run = evaluate(lm, task, EVALUATE["methods"], n_test=EVALUATE["n_test"], seed=SEED, progress=progress)
    views: dict[str, Any] = {"evaluate": run.to_json()}
    for name, spec in ANALYSES.items():
        if spec.views:
            try:
                views.update(resolve(spec.views)(lm, task, progress))
            except ValueError as err:  # the analyses' refusals of a task (LabelError, TaskError) are ValueErrors
                print(f"{task.name}: no {name} views: {err}")
    return views


def prebuild(lm: LoadedModel, tasks: list[str], root: Path | None = None, progress: Progress = no_progress,
             configs: dict[str, Any] | None = None, methods: list[str] | None = None, views: bool = True) -> None:
    """Build and save the stateful `methods` (default: all) and the views of each task (`configs`: other
    configs than the defaults, for tests on tiny models), then the answers to its one-click query, always (a
    few seconds), so that they are those of the methods now shipped."""
    configs = configs or {}
    for name in progress(tasks, desc="tasks"):
        task = builtin_task(name)
        out = folder(lm, name, root)
        out.mkdir(parents=True, exist_ok=True)
        for method in stateful() if methods is None else methods:
            try:
                built = build_method(lm, task, method, configs.get(method), seed=SEED,
                                     progress=partial(progress, desc=f"{name}: {method}"))
            except BuildError as err:  # a method that cannot serve a task ships nothing for it
                print(f"{name}: {method} not prebuilt: {err}")
                continue
            built.save(out / f"{method}.safetensors")
            print(f"{name}: {method} built in {built.build_s:.1f} s")
        if views:
            t0 = time.perf_counter()
            data = {"fingerprint": lm.fingerprint, "views": compute_views(lm, task, progress)}
            (out / VIEWS).write_text(json.dumps(data, allow_nan=False))
            print(f"{name}: views computed in {time.perf_counter() - t0:.1f} s")
        answers = compute_answers(lm, task, load_methods(lm, name, root))
        (out / ANSWERS).write_text(json.dumps(answers, allow_nan=False))
        print(f"{name}: answers of {', '.join(answers['answers'])} to its one-click query")
