"""Iterative Vectors (Liu & Deng, ICML 2025, "Iterative Vectors: In-Context Gradient Steering without
Backpropagation"): what demonstrations change in every attention output, read by forward passes alone and refined
by running the demonstrations again with the vectors already found added in.

An episode is a few-shot prompt of the task (demonstrations, then a query from the train split that is not one of
them) and the same query alone, zero-shot. In every layer l we read the attention module's output (before it joins
the residual stream) at each answer position: the last token before a demonstration's answer, and the query's last
token. A demonstration's difference is its few-shot output minus the zero-shot query's output; the query's is its
own few-shot output minus its zero-shot one. Within an episode the demonstrations' differences are averaged per
label (one row per label; open tasks keep a single "demo" row), the query's is the last row: (L, R, d).

The iteration: the vectors v are the mean of every episode's differences so far, updated after the first episode
and then every `update_every` episodes (the reference's schedule). Every episode runs its few-shot prompt with the
current vectors already added, `extraction_strength`·v[l, row] at each answer position of each layer, so what an
update measures is what the demonstrations still change once the vectors are in: the "simulated gradient" steps
the paper names, with no backpropagation anywhere. `update_every = 0` updates once, at the end: a plain mean of
differences, no iteration.

Answering (the zero-shot prompt): a' = a + strength·v[l, query] at the prompt's last token, in every layer's
attention output, during the prefill (then decoding runs from that cache with the hooks gone, the runner's rule).
With strength 0 the edit adds zeros, so it answers exactly as zero-shot.

Decisions where the paper or its code leaves a choice to us:
- The paper answers on 1-shot prompts (one demonstration per label, each demonstration's answer position edited by
  its label's vector, the query's by the query vector). ICL Lab's implicit methods answer the bare query, so only the
  query row is used when answering; the label rows exist because the extraction prompts need them.
- The reference reads the zero-shot query one token before its answer position (its answer mask shifted by one), and
  the few-shot one at the answer position itself; here both are read at the answer position, the token after which
  the answer comes, so a difference compares the same token with and without the demonstrations.
- Open tasks (the paper has classification only): one "demo" row for every demonstration, `open_demos` per prompt.
- Every layer's attention output, as the reference's configurations for every model it ran (`o_proj` of layers 0
  to L−1). Families that normalise a branch after its module (Gemma-3, OLMo-2) see the edit through that norm.
- The episodes of one update run as one left-padded batch (the vectors are fixed within it), not one by one.
- Defaults: strength 0.5 and extraction strength 0.1, 30 episodes, chosen on a validation group of built-in tasks
  (emotion, headline-topic, sarcasm, past-tense; seed 100 splits, 10 or more train examples, 38 to 48 held out;
  `bench/iterative_vector_strengths.py`), never on a table's test items. On SmolLM2-135M, with 30 episodes,
  pooled over the 162 items (zero-shot 0.438): strength 0.25 / 0.5 / 0.75 / 1 gave 0.481 / 0.537 / 0.389 / 0.302
  at extraction strength 0.1, and 0.494 / 0.525 / 0.333 / 0.278 at 0.3. The reference's strength 1
  (`iterative-vector@paper`) lands below zero-shot on headline-topic (0.263 against 0.947). Past-tense, the open
  task, stayed at 0.000 at every setting, as zero-shot. 30 episodes rather than 200 for the build's time (a 10-example
  train split is covered many times over by 30 episodes of 2 to 6 demonstrations); the two were not compared.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import torch
from torch import nn

from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import Template
from icr_app.core.scoring import Intervention, pad_left, prefill
from icr_app.core.tasks import Example, Task, sample_demos
from icr_app.core.trace import Trace, main_tensor, with_main
from icr_app.methods.base import Answering, BuildContext
from icr_app.methods.iterative_vector.artefact import IterativeVectorMeta, IterativeVectorState
from icr_app.methods.last_token import add_at
from icr_app.methods.state import StatefulMethod, built_fields

QUERY = "query"  # the last row's name; an open task's demonstrations share the row "demo"


@dataclass(frozen=True)
class IterativeVectorConfig:
    """Chosen on a validation group of built-in tasks (module docstring); sized for 2 CPU cores."""

    episodes: int = field(default=30, metadata={
        "help": "extraction episodes: a few-shot prompt of the train split, compared with its query alone"})
    demos_per_class: int = field(default=1, metadata={
        "flag": "demos", "help": "demonstrations of each label per extraction prompt (the paper searches 1 to 4)"})
    open_demos: int = field(default=4, metadata={"help": "demonstrations per extraction prompt on an open task"})
    update_every: int = field(default=10, metadata={
        "help": "episodes between updates of the vectors (each the mean of every episode so far); 0 = one update "
                "at the end, no iteration"})
    extraction_strength: float = field(default=0.1, metadata={
        "help": "scale of the current vectors added at the answer positions of the extraction prompts"})
    strength: float = field(default=0.5, metadata={
        "help": "scale of the query vector added to every layer's attention output when answering; 0 = zero-shot"})

    @classmethod
    def paper(cls) -> IterativeVectorConfig:
        return cls(episodes=200, demos_per_class=1, update_every=10, extraction_strength=0.1, strength=1.0)


PAPER = ("the reference code's defaults: 200 episodes, 1 demonstration per label, an update every 10 episodes, "
         "extraction strength 0.1, strength 1", IterativeVectorConfig.paper)


@dataclass(frozen=True)
class Episode:
    """A few-shot prompt and its answer positions (token indices, the query's last), the vector row each is
    edited and read with, and the query alone."""

    prompt: str
    positions: tuple[int, ...]
    rows: tuple[int, ...]
    zero_shot: str


def attention_modules(lm: LoadedModel) -> dict[int, nn.Module]:
    return {layer: lm.adapter.attention(layer) for layer in range(lm.n_layers)}


def answer_position(lm: LoadedModel, template: Template, before: list[Example], x: str, ids: list[int]) -> int:
    """The token after which the answer to `x` comes, in the prompt `ids` where `before` precede it: the last token
    of the prompt that asks `x` after them, which must tokenise as a prefix of the whole."""
    prefix = lm.tokenizer(template.few_shot(before, x))["input_ids"]
    if ids[: len(prefix)] != prefix:
        raise ValueError("a demonstration's question tokenises differently inside the few-shot prompt than alone, "
                         "so its answer position is not defined")
    return len(prefix) - 1


def make_episode(lm: LoadedModel, template: Template, demos: list[Example], query: Example,
                 row_of: dict[str, int]) -> Episode:
    prompt = template.few_shot(demos, query.input)
    ids = lm.tokenizer(prompt)["input_ids"]
    positions = [answer_position(lm, template, demos[:i], d.input, ids) for i, d in enumerate(demos)]
    rows = [row_of.get(d.output, 0) for d in demos]
    return Episode(prompt, (*positions, len(ids) - 1), (*rows, len(row_of)), template.zero_shot(query.input))


def row_names(answering: Answering) -> list[str]:
    """One row per label (classification) or one for every demonstration (open), then the query's."""
    return [*answering.labels, QUERY] if answering.kind == "classification" else ["demo", QUERY]


def sample_episodes(lm: LoadedModel, train: Task, answering: Answering, cfg: IterativeVectorConfig,
                    seed: int) -> list[Episode]:
    """`cfg.episodes` episodes: a query drawn from the train split, then class-balanced demonstrations without it."""
    classification = answering.kind == "classification"
    row_of = {label: i for i, label in enumerate(answering.labels)} if classification else {}
    pool = [e for e in train.examples if not classification or e.output in row_of]
    if len(pool) < 2:
        raise ValueError("iterative vectors need at least 2 training examples (demonstrations and a query)")
    source = Task(train.name, tuple(pool), train.kind)
    k = cfg.demos_per_class * len(row_of) if classification else cfg.open_demos
    rng = random.Random(seed)
    episodes = []
    for _ in range(cfg.episodes):
        query = rng.choice(pool)
        demos = sample_demos(source, k, rng, exclude_input=query.input)
        episodes.append(make_episode(lm, answering.template, demos, query, row_of))
    return episodes


@torch.no_grad()
def read_attention(lm: LoadedModel, prompts: list[str], positions: list[tuple[int, ...]],
                   rows: list[tuple[int, ...]], vectors: torch.Tensor, scale: float) -> torch.Tensor:
    """(L, N, d) fp32 on the CPU: every layer's attention output at the N = Σ len(positions) answer positions of
    the prompts (a negative position counts from the prompt's end), with scale·vectors[l, row] added there first."""
    ids = [lm.tokenizer(p)["input_ids"] for p in prompts]
    enc = pad_left(lm, ids)
    width = enc.input_ids.shape[1]
    batch = torch.tensor([i for i, ps in enumerate(positions) for _ in ps])
    at = torch.tensor([width - len(ids[i]) + q % len(ids[i]) for i, ps in enumerate(positions) for q in ps])
    row = torch.tensor([r for rs in rows for r in rs])
    read: dict[int, torch.Tensor] = {}

    def edit(layer: int, output: Any) -> Any:
        x = main_tensor(output)
        where = (batch.to(x.device), at.to(x.device))
        if scale:
            x = x.index_put(where, (scale * vectors[layer, row.to(vectors.device)]).to(x.device, x.dtype),
                            accumulate=True)
        read[layer] = x[where].float().cpu()
        return with_main(output, x)

    with lm.lock, Trace(attention_modules(lm), edit_output=edit):
        prefill(lm, enc)
    return torch.stack([read[layer] for layer in range(lm.n_layers)])


def differences(lm: LoadedModel, group: list[Episode], vectors: torch.Tensor, n_rows: int,
                scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Summed over the group's episodes: each episode's per-row mean of few-shot minus zero-shot attention outputs
    (L, R, d), and in how many episodes each row occurred (R,)."""
    few = read_attention(lm, [e.prompt for e in group], [e.positions for e in group], [e.rows for e in group],
                         vectors, scale)
    alone = read_attention(lm, [e.zero_shot for e in group], [(-1,)] * len(group), [(0,)] * len(group), vectors, 0.0)
    episode = torch.tensor([i for i, e in enumerate(group) for _ in e.positions])
    key = episode * n_rows + torch.tensor([r for e in group for r in e.rows])
    diff = few - alone[:, episode]
    cells = len(group) * n_rows
    sums = torch.zeros(diff.shape[0], cells, diff.shape[-1]).index_add_(1, key, diff)
    counts = torch.bincount(key, minlength=cells)
    means = (sums / counts.clamp(min=1)[None, :, None]).view(diff.shape[0], len(group), n_rows, -1)
    return means.sum(1), (counts.view(len(group), n_rows) > 0).sum(0)


def update_groups(n_episodes: int, every: int) -> list[range]:
    """The episodes between updates: the first alone, then `every` at a time, the last group cut short (the
    reference's schedule); `every` = 0: all in one."""
    ends = [e for e in range(n_episodes) if (every and e % every == 0) or e == n_episodes - 1]
    return [range(start, end + 1) for start, end in zip([0, *[e + 1 for e in ends[:-1]]], ends)]


def extract(lm: LoadedModel, episodes: list[Episode], n_rows: int, cfg: IterativeVectorConfig,
            progress: Progress = no_progress) -> tuple[torch.Tensor, torch.Tensor]:
    """The vectors (L, R, d) after the last update, and their norms (U, L, R) after each of the U updates."""
    d = lm.model.config.hidden_size
    vectors = torch.zeros(lm.n_layers, n_rows, d, device=lm.device)
    sums, counts = torch.zeros(lm.n_layers, n_rows, d), torch.zeros(n_rows)
    norms = []
    for group in progress(update_groups(len(episodes), cfg.update_every), desc="iterative vectors: episodes"):
        s, c = differences(lm, [episodes[i] for i in group], vectors, n_rows, cfg.extraction_strength)
        sums, counts = sums + s, counts + c
        mean = sums / counts.clamp(min=1)[None, :, None]
        vectors = mean.to(lm.device)
        norms.append(mean.norm(dim=-1))
    return vectors.cpu(), torch.stack(norms)


def check(cfg: IterativeVectorConfig) -> None:
    if cfg.episodes < 1 or cfg.update_every < 0 or cfg.demos_per_class < 1 or cfg.open_demos < 1:
        raise ValueError("iterative vectors need episodes, demos_per_class and open_demos of at least 1 and "
                         "update_every of at least 0")


def build(ctx: BuildContext, cfg: IterativeVectorConfig) -> IterativeVectorMethod:
    """Sample the episodes, then run them update by update with the vectors found so far added in."""
    check(cfg)
    lm, train, answering, seed = ctx.lm, ctx.train, ctx.answering, ctx.seed
    t0 = time.perf_counter()
    rows = row_names(answering)
    episodes = sample_episodes(lm, train, answering, cfg, seed)
    vectors, norms = extract(lm, episodes, len(rows), cfg, ctx.progress)
    meta = IterativeVectorMeta(
        task=train.name, **built_fields(lm, answering), strength=cfg.strength,
        extraction_strength=cfg.extraction_strength, episodes=len(episodes), demos=len(episodes[0].positions) - 1,
        update_every=cfg.update_every, rows=rows, build_s=time.perf_counter() - t0, seed=seed)
    return IterativeVectorMethod(lm, IterativeVectorState(vectors=vectors, norms=norms, meta=meta,
                                                          fingerprint=lm.fingerprint))


@contextmanager
def added_to_attention(lm: LoadedModel, vectors: torch.Tensor) -> Iterator[dict[str, Any]]:
    """Every forward inside the block adds vectors[l] (L, d) to layer l's attention output at each row's last
    token (left-padded: its last real one). Entered under `lm.lock`; the hooks are removed on exit."""
    def edit(layer: int, output: Any) -> Any:
        return with_main(output, add_at(main_tensor(output), vectors[layer]))

    with Trace(attention_modules(lm), edit_output=edit):
        yield {}


class IterativeVectorMethod(StatefulMethod):
    """Zero-shot prompts with strength·(query vector) added to every layer's attention output at the last token."""

    name = "iterative-vector"
    STATE = IterativeVectorState
    state: IterativeVectorState

    def __init__(self, lm: LoadedModel, state: IterativeVectorState) -> None:
        super().__init__(lm, state)
        self.stored_parameters = state.query_vectors.numel()  # the label rows and norms only served extraction

    def intervention(self, queries: list[str]) -> Intervention:
        return added_to_attention(self.lm, self.state.meta.strength * self.state.query_vectors.to(self.lm.device))


def neutral(method: IterativeVectorMethod) -> IterativeVectorMethod:
    """The same vectors at strength 0: zeros are added, so it answers as zero-shot."""
    state = method.state
    return IterativeVectorMethod(method.lm, replace(state, meta=replace(state.meta, strength=0.0)))
