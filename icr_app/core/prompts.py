"""Prompt templates and demonstration sampling (docs/scoring.md)."""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # tasks carry a Template, so prompts may not import tasks at run time
    from icr_app.core.tasks import Example, Task

SHOTS = 10  # demonstrations per few-shot prompt (evaluate keeps at least this many training examples)


@dataclass(frozen=True)
class Template:
    """`query` must end where the answer starts; a demonstration is the query plus ` {y}` and `sep`."""

    query: str = "Input: {x}\nOutput:"
    sep: str = "\n\n"

    def __post_init__(self) -> None:
        if "{x}" not in self.query:
            raise ValueError("the template must contain {x} where the input goes")

    def zero_shot(self, x: str) -> str:
        return self.query.replace("{x}", x)

    def demo(self, ex: Example) -> str:
        return f"{self.zero_shot(ex.input)} {ex.output}{self.sep}"

    def few_shot(self, demos: list[Example], x: str) -> str:
        return "".join(self.demo(d) for d in demos) + self.zero_shot(x)


def answer_text(label: str) -> str:
    """The continuation a prompt expects: the template ends with 'Output:', the answer adds ' label'."""
    return " " + label


def sample_demos(
    train: Task, k: int, rng: random.Random, exclude_input: str | None = None
) -> list[Example]:
    """k demonstrations, class-balanced for classification (round-robin over labels), shuffled."""
    pool = [e for e in train.examples if e.input != exclude_input]
    k = min(k, len(pool))
    if train.kind != "classification":
        return rng.sample(pool, k)
    by_label: dict[str, list[Example]] = defaultdict(list)
    for e in pool:
        by_label[e.output].append(e)
    for exs in by_label.values():
        rng.shuffle(exs)
    labels = list(by_label)
    rng.shuffle(labels)
    picked: list[Example] = []
    while len(picked) < k:
        for lab in labels:
            if by_label[lab] and len(picked) < k:
                picked.append(by_label[lab].pop())
    rng.shuffle(picked)
    return picked


def sample_icl_prompts(task: Task, template: Template, n_prompts: int, n_demos: int, seed: int) -> list[str]:
    """n_prompts few-shot prompts, each n_demos demonstrations plus a query, all drawn from the task."""
    rng = random.Random(seed)
    prompts = []
    for _ in range(n_prompts):
        query = rng.choice(task.examples)
        prompts.append(template.few_shot(sample_demos(task, n_demos, rng, exclude_input=query.input), query.input))
    return prompts
