"""Few-shot (explicit ICL): k class-balanced demonstrations from the train split before the query."""

from __future__ import annotations

import random
from dataclasses import dataclass

from icr_app.core.strings import folder_strings
from icr_app.core.tasks import Task, sample_demos
from icr_app.methods.base import Answering, BuildContext, Method, MethodSpec


@dataclass(frozen=True)
class FewShotConfig:
    """The number of demonstrations is the run's `--shots`, shared with the methods that show ICL prompts."""


class FewShotMethod(Method):
    """Demonstrations seeded per query, so a query gets the same prompt in a batch or on its own."""

    name = "few-shot"

    def __init__(self, lm, answering: Answering, train: Task, shots: int, seed: int = 0) -> None:
        super().__init__(lm, answering)
        self.train, self.shots, self.seed = train, shots, seed

    def prompt(self, x: str) -> str:
        rng = random.Random(f"{self.seed}:{x}")
        return self.template.few_shot(sample_demos(self.train, self.shots, rng, exclude_input=x), x)


def build(ctx: BuildContext, config: FewShotConfig) -> FewShotMethod:
    return FewShotMethod(ctx.lm, ctx.answering, ctx.train, ctx.shots, ctx.seed)


SPEC = MethodSpec(name="few-shot", title="Few-shot (explicit ICL)", kind="baseline", instant=True,
                  config=FewShotConfig, build=build, description="k class-balanced demonstrations in the prompt",
                  strings=folder_strings(__file__))
