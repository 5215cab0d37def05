"""Side-by-side evaluation of registered methods on one held-out split, timed in the same run.

The `eval` CLI, the app's Evaluate tab and the benchmarks all go through `evaluate`, so their numbers are
comparable. A method that cannot serve the task (a refusal, a failed build) is reported with its error and
the others still run. Every method is built first; then the model answers one untimed batch (so no method
pays the process's warm-up) and the methods are timed batch by batch in turn, so a latency ratio means what
it says even on a machine whose load changes during the run.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from icr_app.core.loading import dtype_name
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Cancelled, Progress, no_progress
from icr_app.core.prompts import SHOTS, PromptFormat, Template
from icr_app.core.scoring import first_token_id
from icr_app.core.tasks import Task, item_keys, split
from icr_app.methods import build_method, parse_entry
from icr_app.methods.base import Answering, BuildError, Method, Prediction, is_correct
from icr_app.methods.zero_shot import ZeroShotMethod
from icr_app.stats import paired_comparisons, wilson


@dataclass
class MethodResult:
    accuracy: float | None = None
    ci95: list[float] | None = None  # Wilson interval of the accuracy
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
    dtype: str = "float32"  # what the model ran in, and the device map it was loaded with ({"": device} when whole)
    device_map: dict[str, str] = field(default_factory=dict)
    paired: list[dict[str, Any]] = field(default_factory=list)  # `stats.paired_comparisons` of the methods' items
    seeds: list[int] = field(default_factory=list)  # [seed]: the key a run over several seeds has too
    items: list[str] = field(default_factory=list)  # `core.tasks.item_keys` of the test items, in scoring order
    prompt_format: str = "plain"  # how every method's prompts reached the model (`core.prompts.PROMPT_FORMATS`)

    def __post_init__(self) -> None:
        self.seeds = self.seeds or [self.seed]
        # computed here, not only by `evaluate`, so a report read back (a suite's units, a shipped run) has it too
        self.paired = self.paired or paired_comparisons(
            {name: r.correct for name, r in self.methods.items() if r.error is None}, items=self.items or None)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def failed(self) -> list[str]:
        return [name for name, r in self.methods.items() if r.error is not None]


def result_of(method: Method, preds: list[Prediction], test: Task, elapsed: float) -> MethodResult:
    """Accuracy, first-token accuracy and cost of a method's predictions on the test split."""
    lm = method.lm
    correct = [is_correct(p, y) for p, y in zip(preds, test.outputs)]
    first_ok = [p.first_token == first_token_id(lm, y, method.template) for p, y in zip(preds, test.outputs)]
    n = len(preds)
    return MethodResult(
        accuracy=sum(correct) / n,
        ci95=wilson(sum(correct), n),
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


Scorer = Callable[[dict[str, Method], Task, int, Progress], dict[str, MethodResult]]


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
    score: Scorer = score_interleaved,
    prompt_format: PromptFormat = "plain",
) -> EvalReport:
    """Build each method on the train split and score it on the same seeded test split.

    `methods` are registry names or "name@preset" entries; results are keyed by entry. `configs` maps an
    entry to its config (default: the preset's, or the method's defaults). A method that raises while it is
    built or scored gets `error` set; a cancel (`Cancelled`) stops the whole run. `score` scores the built
    methods on the test split (`parallel.sharded` spreads the items over processes). `prompt_format`: how every
    method's prompts reach the model, demonstrations and queries alike: as plain text, or through the model's
    chat template (docs/scoring.md).
    """
    specs = {entry: parse_entry(entry)[0] for entry in methods}
    configs = configs or {}
    train, test = eval_split(task, n_test, seed, shots)
    answering = Answering.of(lm, train, template, task.labels, prompt_format)
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
    results.update(score(built, test, batch_size, progress))
    results = {entry: results[entry] for entry in specs}  # the order asked for
    for entry, res in results.items():
        res.build_s = build_s[entry]
    base = results.get("zero-shot")
    if base is not None and base.latency_s:
        for res in results.values():
            if res.latency_s is not None:
                res.latency_ratio_to_zero_shot = res.latency_s / base.latency_s
    return EvalReport(task.name, lm.name, len(test.examples), seed, task.kind, results,
                      dtype=dtype_name(lm.dtype), device_map=lm.device_map, items=item_keys(test),
                      prompt_format=prompt_format)


def eval_split(task: Task, n_test: int, seed: int, shots: int) -> tuple[Task, Task]:
    """The (train, test) split `evaluate` uses: enough training examples left for the demonstrations."""
    return split(task, n_test, seed, min_train=max(2, shots))


@dataclass
class SeedsReport:
    """One `evaluate` run per seed, each with its own split, demonstrations and builds. The seeds' items are
    pooled in seed order; an item two seeds drew is one item to the paired tests (`stats.paired`)."""
    runs: list[EvalReport]

    @property
    def failed(self) -> list[str]:
        return list(dict.fromkeys(name for run in self.runs for name in run.failed))

    def to_json(self) -> dict[str, Any]:
        """One seed: that run's JSON. Several: per method the mean accuracy, its sd over seeds, the interval
        of all seeds' items pooled and `per_seed`; `paired` compares the methods on the pooled items."""
        if len(self.runs) == 1:
            return self.runs[0].to_json()
        first = self.runs[0]
        methods = {name: summarise(name, self.runs) for name in first.methods}
        pooled = {name: m["correct"] for name, m in methods.items() if m["error"] is None}
        # a report read back from before items were recorded has none: its pairs then count as distinct items
        items = [key for run in self.runs for key in run.items] if all(run.items for run in self.runs) else []
        return {"task": first.task, "model": first.model, "dtype": first.dtype, "device_map": first.device_map,
                "n_test": first.n_test, "kind": first.kind, "prompt_format": first.prompt_format,
                "seeds": [run.seed for run in self.runs],
                "items": items, "methods": methods, "paired": paired_comparisons(pooled, items=items or None)}


MEANS = ("accuracy", "first_token_accuracy", "latency_s", "mean_prompt_tokens", "build_s",
         "latency_ratio_to_zero_shot")


def summarise(name: str, runs: list[EvalReport]) -> dict[str, Any]:
    """A method over seeds. Its items are paired with the other methods' seed by seed, so the per-item lists are
    concatenated in seed order; the pooled Wilson interval counts an item drawn by two seeds' splits twice."""
    per_seed = [{"seed": run.seed, **asdict(run.methods[name])} for run in runs]
    errors = [f"seed {r['seed']}: {r['error']}" for r in per_seed if r["error"] is not None]
    if errors:
        return {**dict.fromkeys(MEANS), "error": "; ".join(errors), "per_seed": per_seed}
    correct = [c for r in per_seed for c in r["correct"]]
    means = {key: statistics.fmean(r[key] for r in per_seed) if all(r[key] is not None for r in per_seed) else None
             for key in MEANS}
    return {**means, "accuracy_sd": statistics.stdev(r["accuracy"] for r in per_seed),
            "ci95": wilson(sum(correct), len(correct)), "n": len(correct),
            "stored_parameters": per_seed[0]["stored_parameters"],
            "trainable_parameters": per_seed[0]["trainable_parameters"], "correct": correct, "error": None,
            "per_seed": per_seed}


def evaluate_seeds(lm: LoadedModel, task: Task, methods: list[str], seeds: list[int], **kwargs: Any) -> SeedsReport:
    """`evaluate` once per seed (split, demonstrations and builds all follow the seed)."""
    return SeedsReport([evaluate(lm, task, methods, seed=seed, **kwargs) for seed in seeds])
