"""The method interface every way of adapting the model implements, and the two explicit baselines.

A method says which prompt a query gets and what (if anything) to inject during that prompt's
prefill. Running, batching, scoring and timing are shared (`Method.predict`), so methods differ only
in what they really change.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from icr_app.models import LoadedModel
from icr_app.prompts import SHOTS, Template, answer_text, sample_demos
from icr_app.scoring import exact_match, generate, label_set, score_labels
from icr_app.tasks import Task

Progress = Callable[..., Iterable]
"""Wraps an iterable to show progress (tqdm in the CLI, gr.Progress.tqdm in the app). Called as
`progress(it)` or `progress(it, desc=...)`, where a long job with several stages names the stage."""


def no_progress(it: Iterable, **_: object) -> Iterable:
    return it


@dataclass
class Prediction:
    query: str
    prompt: str
    prediction: str
    generated: str
    prompt_tokens: int
    label_probs: dict[str, float] | None = None
    first_token: int | None = None


class Method:
    """Zero-shot behaviour; subclasses override `prompt` and/or `intervention`."""

    name = "zero-shot"

    def __init__(self, lm: LoadedModel, train: Task, template: Template | None = None,
                 labels: list[str] | None = None) -> None:
        self.lm = lm
        self.train = train
        self.template = template or Template()
        self.kind = train.kind
        self.labels = labels or train.labels
        self.label_set = label_set(lm, self.labels) if self.kind == "classification" else None
        answers = [answer_text(y) for y in dict.fromkeys(train.outputs)]  # distinct, one batched call
        longest = max(map(len, lm.tokenizer(answers, add_special_tokens=False)["input_ids"]))
        self.max_new_tokens = min(longest + 2, 24)

    def prompt(self, x: str, i: int) -> str:
        return self.template.zero_shot(x)

    def intervention(self, queries: list[str]) -> AbstractContextManager:
        return nullcontext()

    def predict(self, queries: list[str], batch_size: int = 16, progress: Progress = no_progress,
                ) -> list[Prediction]:
        """Predictions for queries, batched by prompt length (less padding) and returned in order."""
        prompts = [self.prompt(x, i) for i, x in enumerate(queries)]
        n_tok = [len(ids) for ids in self.lm.tokenizer(prompts)["input_ids"]]
        order = sorted(range(len(prompts)), key=lambda i: n_tok[i])
        batches = [order[s: s + batch_size] for s in range(0, len(order), batch_size)]
        preds: list[Prediction | None] = [None] * len(prompts)
        for idx in progress(batches):
            batch_prompts = [prompts[i] for i in idx]
            ctx = self.intervention([queries[i] for i in idx])
            if self.label_set is not None:
                probs = score_labels(self.lm, batch_prompts, self.label_set, ctx)
                for row, i in zip(probs.tolist(), idx):
                    best = max(range(len(row)), key=row.__getitem__)
                    preds[i] = Prediction(
                        query=queries[i], prompt=prompts[i], prediction=self.labels[best],
                        generated=self.labels[best], prompt_tokens=n_tok[i],
                        label_probs=dict(zip(self.labels, row)),
                        first_token=self.label_set.first_ids[best],
                    )
            else:
                for g, i in zip(generate(self.lm, batch_prompts, self.max_new_tokens, ctx), idx):
                    preds[i] = Prediction(
                        query=queries[i], prompt=prompts[i], prediction=g.text.strip(),
                        generated=g.text, prompt_tokens=n_tok[i], first_token=g.first_token,
                    )
        return preds  # type: ignore[return-value]


class ZeroShot(Method):
    name = "zero-shot"


class FewShot(Method):
    """Explicit ICL: k demonstrations from the train split, class-balanced, seeded per query."""

    name = "few-shot"

    def __init__(self, lm: LoadedModel, train: Task, template: Template | None = None,
                 labels: list[str] | None = None, shots: int = SHOTS, seed: int = 0) -> None:
        super().__init__(lm, train, template, labels)
        self.shots = shots
        self.seed = seed

    def prompt(self, x: str, i: int) -> str:
        rng = random.Random(f"{self.seed}:{x}")  # the query alone: same demos in a batch or on its own
        return self.template.few_shot(sample_demos(self.train, self.shots, rng, exclude_input=x), x)


def is_correct(pred: Prediction, target: str) -> bool:
    """Label match for classification, DESIGN.md's prefix exact match for open tasks."""
    if pred.label_probs is not None:
        return pred.prediction == target
    return exact_match(pred.generated, target)
