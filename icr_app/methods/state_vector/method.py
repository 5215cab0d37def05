"""The state vector's config, what a build keeps, the build, and answering with it (the module docstring of the
folder's `__init__.py` says what it computes and why)."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import torch

from icr_app.core.capture import head_outputs
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import Template
from icr_app.core.scoring import Intervention
from icr_app.core.tasks import Example, Task, sample_demos
from icr_app.core.trace import Trace
from icr_app.methods.base import BuildContext, Method
from icr_app.methods.last_token import best_layer, gold_and_candidates, last_token_variants
from icr_app.methods.state import BuiltMeta, BuiltState, StatefulMethod, axes, built_fields
from icr_app.methods.state_vector.reading import Shown, inner, momentum, separator_states, shown, written_state

Mode = Literal["average", "inner", "momentum", "divide-conquer"]


@dataclass(frozen=True)
class StateVectorConfig:
    """Sized for 2 CPU cores; the paper's own settings are the preset `state-vector@paper`."""

    mode: Mode = field(default="momentum", metadata={
        "help": "how the states become one vector: average (the query's state, unrefined), inner (mean of the last "
                "states), momentum (inner plus a momentum step), divide-conquer (groups of examples aggregated)"})
    n_prompts: int = field(default=8, metadata={
        "flag": "prompts", "help": "few-shot prompts whose states are averaged position by position (the paper: 1)"})
    n_demos: int = field(default=0, metadata={
        "flag": "demos", "help": "demonstrations per prompt; 0 = the run's --shots (the paper uses 10)"})
    inner_window: int = field(default=7, metadata={
        "flag": "window", "help": "inner optimisation: the last states averaged, the query's included (the paper: 7)"})
    momentum_steps: int = field(default=5, metadata={
        "flag": "steps", "help": "momentum: differences of successive demonstrations' states weighed (the paper: 5)"})
    momentum_decay: float = field(default=0.5, metadata={
        "flag": "decay", "help": "momentum: weight of a difference one step older (the paper's 1,2,4,8,16: 0.5)"})
    momentum_lr: float = field(default=1.0, metadata={
        "flag": "lr", "help": "momentum: the step's size (the paper: 1)"})
    group_size: int = field(default=10, metadata={
        "help": "divide-conquer: demonstrations per group (the paper: 10)"})
    n_groups: int = field(default=0, metadata={
        "flag": "groups", "help": "divide-conquer: groups at most; 0 = as many as the examples fill"})
    repeats: int = field(default=5, metadata={
        "help": "divide-conquer: orders of each group, and dummy queries of the aggregating prompt, averaged "
                "(the paper: 5)"})
    n_layers: int = field(default=-1, metadata={
        "flag": "layers", "help": "edit the first n layers; -1 = the best n on the validation part"})
    strength: float = field(default=1.0, metadata={
        "help": "how far the query's heads' outputs move to the vector: 1 = written over (the paper), 0 = untouched"})
    val_size: int = field(default=32, metadata={
        "flag": "val", "help": "training examples held out of the prompts to choose n (at most half)"})
    batch_size: int = field(default=4, metadata={"help": "prompts per forward pass while building"})

    @classmethod
    def paper(cls) -> StateVectorConfig:
        return cls(n_prompts=1, n_demos=10)


PAPER = ("the paper's recipe: the states of one 10-shot prompt, the last 7 averaged, a momentum step over the last 5 "
         "differences weighed 1, 2, 4, 8, 16", StateVectorConfig.paper)


@dataclass(kw_only=True)
class StateVectorMeta(BuiltMeta):
    mode: str
    n_layers: int  # the first n layers are edited
    strength: float
    n_prompts: int
    n_demos: int
    n_groups: int  # divide-conquer's groups (0 in the other modes)
    n_val: int
    zero_shot_val_accuracy: float

    def check(self, shapes: dict[str, tuple[int, ...]]) -> None:
        super().check(shapes)
        if not 1 <= self.n_layers <= shapes["vector"][0]:
            raise ValueError(f"n_layers {self.n_layers} is not 1..{shapes['vector'][0]}")


@dataclass
class StateVectorState(BuiltState):
    """The vector (L, H, d_h), its first `meta.n_layers` layers written at the query's last token; the sweep that
    chose n (accuracy and gold probability with the first l + 1 layers edited, (L,)); and `shift` (L,), how far
    the refinement moved each layer's vector from the plain average (relative norm of the difference)."""

    KIND = "state-vector"
    TITLE = "state vector"
    META = StateVectorMeta

    vector: torch.Tensor = field(metadata=axes("layers", "heads", "head_dim"))
    layer_accuracy: torch.Tensor = field(metadata=axes("layers"))
    layer_gold_prob: torch.Tensor = field(metadata=axes("layers"))
    shift: torch.Tensor = field(metadata=axes("layers"))
    meta: StateVectorMeta
    fingerprint: str


def mix(x: torch.Tensor, v: torch.Tensor, strength: float) -> torch.Tensor:
    """x moved `strength` of the way to v: v itself at 1 (the paper's replacement), x itself at 0, to the bit (torch's
    lerp computes from the nearer end)."""
    return torch.lerp(x, v.to(x.device, x.dtype).expand_as(x), strength)


def holdout(train: Task, n_val: int, seed: int) -> tuple[Task, list[Example]]:
    """(the examples prompts are built from, the validation examples): at most half the split validates."""
    pool = list(train.examples)
    if len(pool) < 3:
        raise ValueError("a state vector needs at least 3 training examples (two to show, one to validate)")
    random.Random(f"{seed}:validation").shuffle(pool)
    n = max(1, min(n_val, len(pool) // 2))
    return Task(train.name, tuple(pool[n:]), train.kind), pool[:n]


def sampled(lm: LoadedModel, pool: Task, template: Template, n_prompts: int, k: int, seed: int) -> list[Shown]:
    """`n_prompts` prompts of k demonstrations (class-balanced) and a dummy query, all from `pool`."""
    rng = random.Random(seed)
    out = []
    for _ in range(n_prompts):
        query = rng.choice(pool.examples)
        out.append(shown(lm, template, sample_demos(pool, k, rng, exclude_input=query.input), query.input))
    return out


def divide_and_conquer(lm: LoadedModel, pool: list[Example], template: Template, cfg: StateVectorConfig, seed: int,
                       progress: Progress = no_progress) -> tuple[torch.Tensor, torch.Tensor, int]:
    """(aggregated vector, mean of the group vectors, groups). Divide: each group's examples, in `repeats`
    orders, before one dummy query from outside the group; its vector is the query's state averaged over the
    orders. Conquer: a prompt of one dummy demonstration per group whose separator carries that group's
    vector; the aggregate is its query's state, averaged over `repeats` dummy queries."""
    rng = random.Random(f"{seed}:groups")
    examples = rng.sample(pool, len(pool))
    size = min(cfg.group_size, len(pool) - 1)  # a query from outside the group is left
    groups = [examples[s: s + size] for s in range(0, len(examples) - size + 1, size)][:cfg.n_groups or None]
    vectors = []
    for group in progress(groups, desc="state vector: groups"):
        query = rng.choice([e for e in pool if e not in group])
        orders = [shown(lm, template, rng.sample(group, len(group)), query.input) for _ in range(cfg.repeats)]
        vectors.append(separator_states(lm, orders, cfg.batch_size)[-1])
    written = torch.stack(vectors)
    dummies = rng.sample(pool, len(groups))
    queries = [rng.choice([e for e in pool if e not in dummies] or pool) for _ in range(cfg.repeats)]
    aggregate = torch.stack([written_state(lm, shown(lm, template, dummies, q.input), written)
                             for q in progress(queries, desc="state vector: aggregating")]).mean(0)
    return aggregate, written.mean(0), len(groups)


def refined(lm: LoadedModel, pool: Task, template: Template, cfg: StateVectorConfig, k: int, seed: int,
            progress: Progress) -> tuple[torch.Tensor, torch.Tensor]:
    """(the vector of `cfg.mode`, the plain average: the query's state) from the prompts' trajectory (L, width)."""
    trajectory = separator_states(lm, sampled(lm, pool, template, cfg.n_prompts, k, seed), cfg.batch_size, progress)
    plain = trajectory[-1]
    if cfg.mode == "inner":
        return inner(trajectory, cfg.inner_window), plain
    if cfg.mode == "momentum":
        return momentum(trajectory, cfg.inner_window, cfg.momentum_steps, cfg.momentum_decay, cfg.momentum_lr), plain
    return plain, plain


def first_layers_sweep(lm: LoadedModel, method: Method, vector: torch.Tensor, val: list[Example], strength: float,
                       batch_size: int, progress: Progress) -> tuple[torch.Tensor, torch.Tensor]:
    """(accuracy, gold probability) (L + 1,) on `val`: column c with the first c + 1 layers edited, column L the
    unedited zero-shot pass (`last_token_variants`: one prefill per query, its last token once per column)."""
    n_layers = lm.n_layers
    gold, candidates = gold_and_candidates(lm, method, [e.output for e in val])

    def patch(layer: int, x: torch.Tensor, variants: torch.Tensor) -> torch.Tensor:
        edited = ((variants >= layer) & (variants < n_layers))[None, :, None]
        return torch.where(edited, mix(x, vector[layer], strength), x)

    scores = last_token_variants(lm, [method.prompt(e.input) for e in val], gold, candidates, n_layers + 1,
                                 head_outputs(lm), patch, "input", batch_size, progress=progress,
                                 desc="state vector: layers")
    return scores.hit.float().mean(0), scores.gold_prob.mean(0)


def check_config(cfg: StateVectorConfig, lm: LoadedModel) -> None:
    """ValueError naming the field that is out of range."""
    for name in ("n_prompts", "inner_window", "momentum_steps", "group_size", "repeats", "batch_size"):
        if getattr(cfg, name) < 1:
            raise ValueError(f"{name} must be at least 1, not {getattr(cfg, name)}")
    if cfg.n_layers == 0 or cfg.n_layers > lm.n_layers:
        raise ValueError(f"n_layers {cfg.n_layers} is not -1 or 1..{lm.n_layers} (the model's layers)")


def build(ctx: BuildContext, cfg: StateVectorConfig) -> StateVectorMethod:
    """States of few-shot prompts refined as `cfg.mode` says; the number of edited layers chosen on held-out
    examples."""
    lm, answering, seed, progress = ctx.lm, ctx.answering, ctx.seed, ctx.progress
    check_config(cfg, lm)
    t0 = time.perf_counter()
    base = Method(lm, answering)
    pool, val = holdout(ctx.train, cfg.val_size, seed)
    k = min(cfg.n_demos or ctx.shots, len(pool.examples) - 1)  # a small split leaves fewer to show
    n_groups = 0
    if cfg.mode == "divide-conquer":
        vector, plain, n_groups = divide_and_conquer(lm, list(pool.examples), base.template, cfg, seed, progress)
    else:
        vector, plain = refined(lm, pool, base.template, cfg, k, seed, progress)
    shift = (vector - plain).norm(dim=-1) / plain.norm(dim=-1).clamp_min(1e-12)
    accuracy, gold_prob = first_layers_sweep(lm, base, vector, val, cfg.strength, cfg.batch_size, progress)
    n = best_layer(accuracy[:-1], gold_prob[:-1]) + 1 if cfg.n_layers < 0 else cfg.n_layers
    meta = StateVectorMeta(task=ctx.train.name, **built_fields(lm, answering), mode=cfg.mode, n_layers=n,
                           strength=cfg.strength, n_prompts=cfg.n_prompts, n_demos=k, n_groups=n_groups,
                           n_val=len(val), zero_shot_val_accuracy=float(accuracy[-1]),
                           build_s=time.perf_counter() - t0, seed=seed)
    state = StateVectorState(vector.view(lm.n_layers, lm.n_heads, lm.head_dim), accuracy[:-1].clone(),
                             gold_prob[:-1].clone(), shift, meta, lm.fingerprint)
    return StateVectorMethod(lm, state)


@contextmanager
def written_at_last(lm: LoadedModel, vector: torch.Tensor, strength: float) -> Iterator[dict[str, Any]]:
    """An intervention: in layers 0..len(vector) - 1 the heads' outputs at every row's last token (left-padded:
    its last real token) move `strength` of the way to that layer's vector (width H·d_h)."""

    def write(layer: int, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x[:, :-1], mix(x[:, -1:], vector[layer], strength)], dim=1)

    with Trace({layer: lm.adapter.head_out(layer) for layer in range(len(vector))}, edit_input=write):
        yield {}


class StateVectorMethod(StatefulMethod):
    """Zero-shot prompts whose first `meta.n_layers` layers' heads' outputs at the last token are the vector's."""

    name = "state-vector"
    STATE = StateVectorState
    state: StateVectorState

    def __init__(self, lm: LoadedModel, state: StateVectorState) -> None:
        super().__init__(lm, state)
        self.edited = state.vector[:state.meta.n_layers].flatten(1)  # (n, H·d_h)
        self.stored_parameters = self.edited.numel()  # the sweep and the shift beside it only explain the choice

    def intervention(self, queries: list[str]) -> Intervention:
        return written_at_last(self.lm, self.edited.to(self.lm.device), self.state.meta.strength)


def neutral(method: StateVectorMethod) -> StateVectorMethod:
    """The same vector at strength 0: every head's output is kept as it is."""
    state = method.state
    return StateVectorMethod(method.lm, replace(state, meta=replace(state.meta, strength=0.0)))
