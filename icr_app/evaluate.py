"""Side-by-side evaluation of methods on one held-out split, timed in the same run.

Methods register a builder in `METHODS`; the `eval` CLI, the app's evaluate tab and the benchmarks
all go through `evaluate`, so their numbers are comparable.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from icr_app.icr_method import build_icr
from icr_app.methods import FewShot, Method, Progress, ZeroShot, is_correct, no_progress
from icr_app.models import LoadedModel
from icr_app.prompts import SHOTS, Template
from icr_app.scoring import first_token_id
from icr_app.site import site_builder
from icr_app.tasks import Task, split

Builder = Callable[..., Method]
"""builder(lm, train, template, labels, opts, progress) -> a ready Method."""


def _zero_shot(lm: LoadedModel, train: Task, template: Template, labels: list[str],
               opts: dict[str, Any], progress: Progress) -> Method:
    return ZeroShot(lm, train, template, labels)


def _few_shot(lm: LoadedModel, train: Task, template: Template, labels: list[str],
              opts: dict[str, Any], progress: Progress) -> Method:
    return FewShot(lm, train, template, labels, shots=opts.get("shots", SHOTS), seed=opts.get("seed", 0))


METHODS: dict[str, Builder] = {"zero-shot": _zero_shot, "few-shot": _few_shot, "icr": build_icr, "site": site_builder}


@dataclass
class MethodResult:
    accuracy: float
    first_token_accuracy: float
    latency_s: float
    n: int
    mean_prompt_tokens: float
    build_s: float = 0.0
    latency_ratio_to_zero_shot: float | None = None
    correct: list[bool] = field(default_factory=list)  # per test item, in order: pairs methods item by item


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


def score_method(method: Method, test: Task, batch_size: int, progress: Progress) -> MethodResult:
    """Predict the test split and time it (wall clock per query, batches included)."""
    lm = method.lm
    t0 = time.perf_counter()
    preds = method.predict(test.inputs, batch_size=batch_size, progress=progress)
    elapsed = time.perf_counter() - t0
    correct = [is_correct(p, y) for p, y in zip(preds, test.outputs)]
    first_ok = [p.first_token == first_token_id(lm, y) for p, y in zip(preds, test.outputs)]
    n = len(preds)
    return MethodResult(
        accuracy=sum(correct) / n,
        first_token_accuracy=sum(first_ok) / n,
        latency_s=elapsed / n,
        n=n,
        mean_prompt_tokens=sum(p.prompt_tokens for p in preds) / n,
        correct=correct,
    )


def evaluate(
    lm: LoadedModel,
    task: Task,
    methods: list[str],
    n_test: int = 100,
    seed: int = 0,
    template: Template | None = None,
    batch_size: int = 16,
    progress: Progress = no_progress,
    **opts: Any,
) -> EvalReport:
    """Build each method on the train split and score it on the same seeded test split."""
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {', '.join(unknown)}; available: {', '.join(METHODS)}")
    template = template or Template()
    train, test = split(task, n_test, seed, min_train=max(2, opts.get("shots", SHOTS)))
    opts = {"seed": seed, **opts}
    results: dict[str, MethodResult] = {}
    for name in methods:
        t0 = time.perf_counter()
        method = METHODS[name](lm, train, template, task.labels, opts, progress)
        build_s = time.perf_counter() - t0
        res = score_method(method, test, batch_size, progress)
        res.build_s = build_s
        results[name] = res
    if "zero-shot" in results:
        base = results["zero-shot"].latency_s
        for res in results.values():
            res.latency_ratio_to_zero_shot = res.latency_s / base
    return EvalReport(task.name, lm.name, len(test.examples), seed, task.kind, results)
