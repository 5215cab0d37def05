"""Hidden-anchor compression: keep the demonstrations' KV cache only at label words and formatting tokens.

If the deep layers read the task from the label words, the queries can be answered against a cache
that keeps just those (and the template tokens that frame them, which also hold the attention sink at
position 0 when there is no BOS). Compared in one run: full few-shot (the demonstrations re-run with
every query), the full cache of the demonstrations computed once, and the anchors-only cache.
"""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass

import torch

from icr_app.analyses.anchors.prefix import answer_logits, check_compressible, demo_cache, shared_prefix
from icr_app.analyses.anchors.prompt import AnchorPrompt, build_prompt, first_label_ids
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import Template
from icr_app.core.scoring import encode, prefill
from icr_app.core.tasks import Task, sample_demos, split


def anchor_positions(prompt: AnchorPrompt) -> list[int]:
    """Label-word and formatting tokens of the demonstrations (the query's own tokens are not cached)."""
    return sorted(p for p in {*prompt.label_positions, *prompt.format_positions} if p < prompt.prefix_len)


def fixed_demo_prompts(
    lm: LoadedModel, task: Task, n_test: int, shots: int | None, seed: int, template: Template
) -> tuple[Task, list[AnchorPrompt]]:
    """One seeded set of demonstrations (one per class by default) shared by every held-out query."""
    train, test = split(task, n_test, seed, min_train=max(2, shots or len(task.labels)))
    demos = sample_demos(train, shots or len(task.labels), random.Random(seed))
    return train, [build_prompt(lm, demos, q, template) for q in test.examples]


@dataclass
class Variant:
    accuracy: float
    loyalty: float  # agreement with full few-shot
    seconds: float  # total wall clock for all queries, cache build included
    speedup: float  # full few-shot seconds / these seconds
    cached_tokens: int


@dataclass
class CompressionResult:
    task: str
    model: str
    n: int
    prefix_tokens: int
    variants: dict[str, Variant]

    def to_json(self) -> dict:
        return asdict(self)


def compression_experiment(
    lm: LoadedModel, task: Task, prompts: list[AnchorPrompt], batch_size: int = 16, progress: Progress = no_progress
) -> CompressionResult:
    """Accuracy, loyalty and speed of the three ways of answering the same queries with the same demos
    (a ValueError for models with sliding-window layers, where an anchors-only cache is not defined)."""
    check_compressible(lm)
    label_ids = first_label_ids(lm, task.labels, prompts[0].template)
    prefix = shared_prefix(prompts)
    gold = [task.labels.index(p.query.output) for p in prompts]
    batches = [prompts[s: s + batch_size] for s in range(0, len(prompts), batch_size)]

    def full_few_shot() -> list[int]:
        preds = []
        for b in progress(batches):
            with lm.lock:
                preds += prefill(lm, encode(lm, [p.text for p in b]))[:, label_ids].argmax(-1).tolist()
        return preds

    def cached(keep: list[int] | None) -> list[int]:
        demos = demo_cache(lm, prefix, keep)
        return [i for b in progress(batches) for i in answer_logits(lm, demos, b)[:, label_ids].argmax(-1).tolist()]

    runs = {"full few-shot": (full_few_shot, len(prefix)), "full cache": (lambda: cached(None), len(prefix)),
            "anchors cache": (lambda: cached(anchor_positions(prompts[0])), len(anchor_positions(prompts[0])))}
    out: dict[str, Variant] = {}
    base: list[int] = []
    with torch.no_grad():
        for name, (run, n_cached) in runs.items():
            t0 = time.perf_counter()
            preds = run()
            seconds = time.perf_counter() - t0
            base = base or preds
            n = len(preds)
            out[name] = Variant(
                accuracy=sum(a == g for a, g in zip(preds, gold)) / n,
                loyalty=sum(a == b for a, b in zip(preds, base)) / n,
                seconds=seconds, speedup=0.0, cached_tokens=n_cached,
            )
    for v in out.values():
        v.speedup = out["full few-shot"].seconds / v.seconds
    return CompressionResult(task.name, lm.name, len(prompts), len(prefix), out)
