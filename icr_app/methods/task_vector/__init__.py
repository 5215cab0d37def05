"""Task vectors (Hendel et al., 2023): a few-shot prompt's last-token state at one layer, patched into zero-shot.

Build: run few-shot prompts of the task (the train split's examples, the project's `Template`, each ending in
a dummy query that is not one of its demonstrations) and average the residual stream after every block at the
last token. A layer sweep on a validation part of the train split then picks the block `l` whose vector,
written over the zero-shot query's own last-token state there (REPLACED, as in the paper), gets the most
validation queries right (first token, over the labels' first tokens for classification and the vocabulary
for open tasks; ties go to the higher mean probability of the gold token). Answering is a zero-shot pass with
that one patch, so it costs about zero-shot.

The sweep and function vectors' indirect effects share `methods.last_token` (one prefill per prompt, then its
last token once per variant: per layer here, per head there).

Decisions where the paper leaves a choice to us (measured on SmolLM2-135M, seed 0, on a 50-example dev part of
the train split, never the test split):
- Averaged over `n_prompts` few-shot prompts of the task rather than the paper's one vector per test prompt
  from its own demos: a method here learns once from the train split and answers bare zero-shot queries.
- Demonstrations per prompt: the run's `--shots` (10 by default) rather than the paper's 5, so TV is compared
  with few-shot at the same number of examples; it also did no worse: dev accuracy ag_news 0.74 (10 demos) vs
  0.72 (5), antonym 0.04 vs 0.02 (zero-shot 0.36 and 0.00 there). `--task-vector-demos 5` is the paper's.
- The validation part is `val_size` examples (at most half the train split) held out of the prompts, so the
  layer is chosen on queries whose labels the vector never saw (the chosen blocks: 18-19 of 30 on ag_news and
  antonym).
- Answers of open tasks are generated with the patch on the prompt's prefill only (the paper scores the first
  token only).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

import torch

from icr_app.core.capture import blocks, last_token_means
from icr_app.core.strings import folder_strings
from icr_app.core.tasks import Example, Task, sample_icl_prompts
from icr_app.methods.base import BuildContext, Method, MethodView
from icr_app.methods.last_token import (
    LastTokenEdit,
    LastTokenVector,
    VectorMeta,
    best_layer,
    layer_sweep,
    replace_last,
)
from icr_app.methods.state import axes, built_fields, stateful_spec


@dataclass(frozen=True)
class TaskVectorConfig:
    """Sized for 2 CPU cores: the build takes a few seconds on SmolLM2-135M for a small classification task."""

    n_prompts: int = field(default=16, metadata={
        "flag": "prompts", "help": "few-shot prompts whose last-token states are averaged into the vector"})
    n_demos: int = field(default=0, metadata={
        "flag": "demos", "help": "demonstrations per prompt; 0 = the run's --shots (the paper uses 5)"})
    val_size: int = field(default=32, metadata={
        "flag": "val", "help": "training examples held out of the prompts to choose the layer (at most half)"})
    layer: int = field(default=-1, metadata={
        "help": "patch the output of this block (0-based); -1 = the best block on the validation part"})
    batch_size: int = field(default=4, metadata={"help": "prompts per forward pass while building"})


@dataclass(kw_only=True)
class TaskVectorMeta(VectorMeta):
    n_val: int
    zero_shot_val_accuracy: float


@dataclass
class TaskVectorState(LastTokenVector):
    """θ (d,) for block `meta.layer`, and the sweep that chose it: validation accuracy and gold probability (L,)."""

    KIND = "task-vector"
    TITLE = "task vector"
    VECTOR = "theta"
    META = TaskVectorMeta

    theta: torch.Tensor = field(metadata=axes("hidden"))
    layer_accuracy: torch.Tensor = field(metadata=axes("layers"))
    layer_gold_prob: torch.Tensor = field(metadata=axes("layers"))
    meta: TaskVectorMeta
    fingerprint: str


def holdout(train: Task, n_val: int, seed: int) -> tuple[Task, list[Example]]:
    """(the examples prompts are built from, the validation examples): at most half the split validates."""
    pool = list(train.examples)
    if len(pool) < 2:
        raise ValueError("a task vector needs at least 2 training examples (one to build from, one to validate)")
    random.Random(seed).shuffle(pool)
    n = max(1, min(n_val, len(pool) // 2))
    return Task(train.name, tuple(pool[n:]), train.kind), pool[:n]


def written_over(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The paper's patch: the vector replaces the state."""
    return v.expand_as(x)


def build(ctx: BuildContext, cfg: TaskVectorConfig) -> TaskVectorMethod:
    """Average the prompts' last-token states at every block, sweep the blocks on held-out queries, keep the best."""
    lm, train, answering, shots, seed, progress = ctx.lm, ctx.train, ctx.answering, ctx.shots, ctx.seed, ctx.progress
    t0 = time.perf_counter()
    base = Method(lm, answering)
    source, val = holdout(train, cfg.val_size, seed)
    n_demos = min(cfg.n_demos or shots, len(source.examples) - 1)  # a small split leaves fewer to show
    prompts = sample_icl_prompts(source, base.template, cfg.n_prompts, n_demos, seed)
    means = last_token_means(lm, prompts, blocks(lm), "output", cfg.batch_size, progress, "task vector: prompts")
    states = torch.stack([means[layer] for layer in range(lm.n_layers)])
    sweep = layer_sweep(lm, base, states, val, written_over, cfg.batch_size, progress, "task vector: layer sweep")
    accuracy, gold_prob = sweep.hit.float().mean(0), sweep.gold_prob.mean(0)
    layer = best_layer(accuracy[:-1], gold_prob[:-1]) if cfg.layer < 0 else cfg.layer
    if not 0 <= layer < lm.n_layers:
        raise ValueError(f"layer {layer} is not a block of this model (0..{lm.n_layers - 1})")
    meta = TaskVectorMeta(task=train.name, **built_fields(lm, answering), layer=layer, n_prompts=cfg.n_prompts,
                          n_demos=n_demos, n_val=len(val), zero_shot_val_accuracy=float(accuracy[-1]),
                          build_s=time.perf_counter() - t0, seed=seed)
    state = TaskVectorState(states[layer].clone(), accuracy[:-1].clone(), gold_prob[:-1].clone(), meta, lm.fingerprint)
    return TaskVectorMethod(lm, state)


class TaskVectorMethod(LastTokenEdit):
    name = "task-vector"
    STATE = TaskVectorState
    edit = staticmethod(replace_last)



SPEC = stateful_spec(
    TaskVectorMethod, title="Task vector", config=TaskVectorConfig, build=build, kind="implicit",
    description="a few-shot prompt's last-token state at one layer, written over the zero-shot query's there",
    view=MethodView("tv", "icr_app.methods.task_vector.figures:layer_figure",
                    "icr_app.methods.task_vector.figures:summary"),
    strings=folder_strings(__file__),
)
