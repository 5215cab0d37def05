"""Side-by-side evaluation of registered methods on one held-out split, timed in the same run.

The `eval` CLI, the app's Evaluate tab and the benchmarks all go through `evaluate`, so their numbers are
comparable. A method that cannot serve the task (a refusal, a failed build) is reported with its error and
the others still run. Every method is built first; then the model answers one untimed batch (so no method
pays the process's warm-up) and the methods are timed batch by batch in turn, so a latency ratio means what
it says even on a machine whose load changes during the run.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from icr_app.core.models import LoadedModel
from icr_app.core.progress import Cancelled, Progress, no_progress
from icr_app.core.prompts import SHOTS, Template
from icr_app.core.scoring import first_token_id
from icr_app.core.tasks import Task, split
from icr_app.methods import build_method, parse_entry
from icr_app.methods.base import Answering, BuildError, Method, Prediction, is_correct
from icr_app.methods.zero_shot import ZeroShotMethod


@dataclass
class MethodResult:
    accuracy: float | None = None
    first_token_accuracy: float | None = None
    latency_s: float | None = None
    n: int = 0
    mean_prompt_tokens: float | None = None
    build_s: float = 0.0
    latency_ratio_to_zero_shot: float | None = None
    stored_parameters: int = 0
    trainable_parameters: int = 0
    correct: list[bool] = field(default_factory=list)  # per test item, in order: pairs methods item by item
    error: str | None = None  # why the method could not serve the task; every number is then None


@dataclass
class EvalReport:
    task: str
    model: str
    n_test: int
    seed: int
    kind: str
    methods: dict[str, MethodResult]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def failed(self) -> list[str]:
        return [name for name, r in self.methods.items() if r.error is not None]


def result_of(method: Method, preds: list[Prediction], test: Task, elapsed: float) -> MethodResult:
    """Accuracy, first-token accuracy and cost of a method's predictions on the test split."""
    lm = method.lm
    correct = [is_correct(p, y) for p, y in zip(preds, test.outputs)]
    first_ok = [p.first_token == first_token_id(lm, y) for p, y in zip(preds, test.outputs)]
    n = len(preds)
    return MethodResult(
        accuracy=sum(correct) / n,
        first_token_accuracy=sum(first_ok) / n,
        latency_s=elapsed / n,
        n=n,
        mean_prompt_tokens=sum(p.prompt_tokens for p in preds) / n,
        stored_parameters=method.stored_parameters,
        trainable_parameters=method.trainable_parameters,
        correct=correct,
    )


def score_interleaved(methods: dict[str, Method], test: Task, batch_size: int, progress: Progress = no_progress,
                      ) -> dict[str, MethodResult]:
    """Score every method on the test split one batch at a time, taking the methods in turn within each batch,
    so a change in the machine's load (another process, a throttled core) falls on every method alike and the
    latency ratios stay fair. A method that raises is reported with its error; the others go on."""
    order = sorted(range(len(test.inputs)), key=lambda i: len(test.inputs[i]))  # similar lengths share a batch
    chunks = [order[s: s + batch_size] for s in range(0, len(order), batch_size)]
    preds: dict[str, list[Prediction]] = {name: [None] * len(order) for name in methods}  # type: ignore[list-item]
    elapsed = dict.fromkeys(methods, 0.0)
    errors: dict[str, str] = {}
    for idx in progress(chunks, desc="scoring"):
        queries = [test.inputs[i] for i in idx]
        for name, method in methods.items():
            if name in errors:
                continue
            t0 = time.perf_counter()
            try:
                out = method.predict(queries, batch_size=batch_size)
            except Cancelled:
                raise
            except Exception as err:  # one method that cannot answer never takes the others down
                errors[name] = f"{type(err).__name__}: {err}"
                continue
            elapsed[name] += time.perf_counter() - t0
            for i, p in zip(idx, out):
                preds[name][i] = p
    return {name: MethodResult(error=errors[name]) if name in errors else
            result_of(method, preds[name], test, elapsed[name]) for name, method in methods.items()}


def warm_up(lm: LoadedModel, answering: Answering, queries: list[str], batch_size: int) -> None:
    """One untimed zero-shot batch: the first forward passes of a process pay one-off costs."""
    ZeroShotMethod(lm, answering).predict(queries[:batch_size], batch_size=batch_size)


def evaluate(
    lm: LoadedModel,
    task: Task,
    methods: list[str],
    n_test: int = 100,
    seed: int = 0,
    template: Template | None = None,
    batch_size: int = 16,
    shots: int = SHOTS,
    configs: dict[str, Any] | None = None,
    progress: Progress = no_progress,
) -> EvalReport:
    """Build each method on the train split and score it on the same seeded test split.

    `methods` are registry names or "name@preset" entries; results are keyed by entry. `configs` maps an
    entry to its config (default: the preset's, or the method's defaults). A method that raises while it is
    built or scored gets `error` set; a cancel (`Cancelled`) stops the whole run.
    """
    specs = {entry: parse_entry(entry)[0] for entry in methods}
    configs = configs or {}
    train, test = split(task, n_test, seed, min_train=max(2, shots))
    answering = Answering.of(lm, train, template, task.labels)
    built: dict[str, Method] = {}
    results: dict[str, MethodResult] = {}
    build_s: dict[str, float] = {}
    for entry in specs:
        t0 = time.perf_counter()
        try:
            built[entry] = build_method(lm, train, entry, configs.get(entry), answering=answering, seed=seed,
                                       shots=shots, progress=progress)
        except BuildError as err:  # one method that cannot serve the task never takes the others down
            results[entry] = MethodResult(error=f"{type(err.cause).__name__}: {err.cause}")
        build_s[entry] = time.perf_counter() - t0  # a failed build's time too
    warm_up(lm, answering, test.inputs, batch_size)
    results.update(score_interleaved(built, test, batch_size, progress))
    results = {entry: results[entry] for entry in specs}  # the order asked for
    for entry, res in results.items():
        res.build_s = build_s[entry]
    base = results.get("zero-shot")
    if base is not None and base.latency_s:
        for res in results.values():
            if res.latency_s is not None:
                res.latency_ratio_to_zero_shot = res.latency_s / base.latency_s
    return EvalReport(task.name, lm.name, len(test.examples), seed, task.kind, results)
