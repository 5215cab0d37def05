"""Function vectors (Todd et al., 2024): the summed outputs of the heads that carry the task, added at one layer.

Build:
1. the mean output of every attention head (the input of the attention's output projection, split per head)
   at the last token of clean few-shot prompts of the task (`core.capture.last_token_means`);
2. each head's average indirect effect (AIE): on few-shot prompts whose demonstrations' labels are SHUFFLED,
   write that head's mean output over its own output at the last token and measure how much the probability
   of the query's correct first answer token rises (softmax over the labels' first tokens for classification,
   over the vocabulary for open tasks), averaged over the prompts;
3. the function vector: the top-k heads' mean outputs, each projected through its layer's output projection
   (its weight only: a bias belongs to no head, and the zero-shot pass already adds it once), summed.
Answering is a zero-shot pass with the function vector ADDED to the residual stream (the output of block
`layer`) at the last prompt token.

The AIE patch changes only the last position, so each corrupted prompt's prefix runs once into a KV cache and
its last token then runs once per head, all L·H heads of a prompt in a single forward pass of L·H + 1 extra
positions (`last_token.last_token_variants`): a prompt costs one prefill of its length plus L·H + 1 tokens,
not L·H prefills.

Decisions where the paper leaves a choice to us (measured on SmolLM2-135M, seed 0, on a 50-example dev part of
the train split, never the test split):
- top-k: the paper uses 10 of GPT-J's 448 heads, a share that gives 6 of SmolLM2-135M's 270. On ag_news (dev
  zero-shot 0.36) k = 3, 6, 10, 20, 30, 45, 70 gave 0.36, 0.34, 0.44, 0.60, 0.46, 0.22, 0.26; on antonym every
  k in 3-20 and edit layer 8, 10 or 12 stayed at 0.00, as zero-shot. The default is therefore 20 heads per 270
  (`HEAD_SHARE`, scaled to other models); `--function-vector-top-k` sets it.
- Edit layer: block L // 3 (0-based), as the paper's GPT-J choice (9 of 28); SmolLM2-135M: block 10 of 30.
- The paper keeps only queries that 10-shot ICL answers correctly; with a handful of examples that filter can
  leave nothing, so every query counts (in the AIE prompts and at test time).
- 24 clean prompts and 16 corrupted ones (the paper: 100 and 25), sized for 2 CPU cores; demonstrations per
  prompt are the run's `--shots` (10 by default, the paper's 10).
- Answers of open tasks are generated with the vector added on the prompt's prefill only, not at every
  generated token as the paper's code does, the same as the task vector and SITE.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from icr_app.core.capture import head_outputs, last_token_means
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import Template
from icr_app.core.strings import folder_strings
from icr_app.core.tasks import Example, Task, sample_demos, sample_icl_prompts
from icr_app.methods.base import BuildContext, Method, MethodView
from icr_app.methods.last_token import (
    LastTokenEdit,
    LastTokenVector,
    VectorMeta,
    add_at,
    gold_and_candidates,
    last_token_variants,
)
from icr_app.methods.state import axes, built_fields, stateful_spec

HEAD_SHARE = 20 / 270  # the top-k that did best on SmolLM2-135M (module docstring), as a share of the heads


@dataclass(frozen=True)
class FunctionVectorConfig:
    """Sized for 2 CPU cores (the paper: 100 clean and 25 corrupted 10-shot prompts)."""

    n_prompts: int = field(default=24, metadata={
        "flag": "prompts", "help": "clean few-shot prompts averaged into each head's mean output"})
    n_corrupted: int = field(default=16, metadata={
        "flag": "corrupted", "help": "shuffled-label prompts the indirect effects are averaged over"})
    n_demos: int = field(default=0, metadata={
        "flag": "demos", "help": "demonstrations per prompt; 0 = the run's --shots (the paper uses 10)"})
    top_k: int = field(default=0, metadata={
        "help": "heads summed into the vector; 0 = 20 per 270 heads of the model (the paper: 10 of GPT-J's 448)"})
    layer: int = field(default=-1, metadata={
        "help": "add the vector to the output of this block (0-based); -1 = block L // 3, as in the paper"})
    batch_size: int = field(default=4, metadata={"help": "prompts per forward pass while building"})


@dataclass(kw_only=True)
class FunctionVectorMeta(VectorMeta):
    top_k: int
    n_corrupted: int


def top_heads(score: torch.Tensor, k: int) -> list[tuple[int, int]]:
    """The k (layer, head) cells of `score` (L, H) with the highest values, best first (ties: lower index)."""
    order = torch.argsort(-score.flatten(), stable=True)[:k].tolist()
    return [divmod(i, score.shape[1]) for i in order]


@dataclass
class FunctionVectorState(LastTokenVector):
    """The vector `fv` (d,) added after block `meta.layer`, and the AIE map (L, H) its heads were chosen from."""

    KIND = "function-vector"
    TITLE = "function vector"
    VECTOR = "fv"
    META = FunctionVectorMeta

    fv: torch.Tensor = field(metadata=axes("hidden"))
    aie: torch.Tensor = field(metadata=axes("layers", "heads"))
    meta: FunctionVectorMeta
    fingerprint: str

    @property
    def heads(self) -> list[tuple[int, int]]:
        return top_heads(self.aie, self.meta.top_k)


def default_top_k(lm: LoadedModel) -> int:
    return max(1, round(HEAD_SHARE * lm.n_layers * lm.n_heads))


def shuffled_label_prompts(task: Task, template: Template, n_prompts: int, n_demos: int, seed: int,
                           ) -> tuple[list[str], list[str]]:
    """(prompts, gold answers): few-shot prompts whose demonstrations' outputs are permuted among them."""
    rng = random.Random(f"{seed}:shuffled")
    prompts, golds = [], []
    for _ in range(n_prompts):
        query = rng.choice(task.examples)
        demos = sample_demos(task, n_demos, rng, exclude_input=query.input)
        outputs = [d.output for d in demos]
        rng.shuffle(outputs)
        prompts.append(template.few_shot([Example(d.input, y) for d, y in zip(demos, outputs)], query.input))
        golds.append(query.output)
    return prompts, golds


def mean_head_outputs(lm: LoadedModel, prompts: list[str], batch_size: int = 4,
                      progress: Progress = no_progress) -> torch.Tensor:
    """(L, H, d_h): each head's output at the last token, averaged over `prompts`."""
    means = last_token_means(lm, prompts, head_outputs(lm), "input", batch_size, progress,
                             "function vector: clean prompts")
    return torch.stack([means[layer].view(lm.n_heads, lm.head_dim) for layer in range(lm.n_layers)])


def indirect_effects(lm: LoadedModel, method: Method, prompts: list[str], golds: list[str], means: torch.Tensor,
                     batch_size: int = 4, progress: Progress = no_progress) -> torch.Tensor:
    """AIE (L, H): the mean rise in the gold first token's probability when head (l, h)'s last-token output is
    replaced by its mean `means[l, h]` (variant l·H + h; the last variant is the unpatched prompt)."""
    n_layers, n_heads = lm.n_layers, lm.n_heads
    gold, candidates = gold_and_candidates(lm, method, golds)

    def patch(layer: Any, v: torch.Tensor, variants: torch.Tensor) -> torch.Tensor:
        head_ids = torch.arange(n_heads, device=v.device)
        mine = (variants // n_heads == layer)[:, None] & (variants % n_heads)[:, None].eq(head_ids)  # (C, H)
        heads = v.reshape(*v.shape[:2], n_heads, -1)
        return torch.where(mine[None, :, :, None], means[layer].to(v.device, v.dtype), heads).reshape(v.shape)

    scores = last_token_variants(lm, prompts, gold, candidates, n_layers * n_heads + 1, head_outputs(lm), patch,
                                 "input", batch_size, progress=progress, desc="function vector: indirect effects")
    effect = scores.gold_prob[:, :-1] - scores.gold_prob[:, -1:]
    return effect.mean(0).view(n_layers, n_heads)


@torch.no_grad()
def project_heads(lm: LoadedModel, means: torch.Tensor, heads: list[tuple[int, int]]) -> torch.Tensor:
    """Σ over `heads` of W_O[l] applied to head h's mean output alone (zeros elsewhere), bias excluded: (d,)."""
    d_h = lm.head_dim
    total = torch.zeros(lm.model.config.hidden_size, device=lm.device)
    for layer, head in heads:
        proj = lm.adapter.head_out(layer)
        x = torch.zeros(2, lm.n_heads * d_h, device=lm.device, dtype=lm.model.dtype)
        x[0, head * d_h:(head + 1) * d_h] = means[layer, head]
        out = proj(x).float().to(total.device)  # a spread model's layers sit on their own devices
        total += out[0] - out[1]  # the all-zero row is the bias alone
    return total.cpu()


def site_overlap(heads: list[tuple[int, int]], site_alpha: torch.Tensor) -> list[tuple[int, int]]:
    """The heads that are both among `heads` (FV's top k) and among SITE's top k by α (same k), sorted."""
    return sorted(set(heads) & set(top_heads(site_alpha, len(heads))))


def build(ctx: BuildContext, cfg: FunctionVectorConfig) -> FunctionVectorMethod:
    """Mean head outputs on clean prompts, their indirect effects on shuffled-label ones, the top-k heads' sum."""
    lm, train, answering, shots, seed, progress = ctx.lm, ctx.train, ctx.answering, ctx.shots, ctx.seed, ctx.progress
    t0 = time.perf_counter()
    base = Method(lm, answering)
    n_demos = min(cfg.n_demos or shots, len(train.examples) - 1)  # a small split leaves fewer to show
    layer = lm.n_layers // 3 if cfg.layer < 0 else cfg.layer
    if not 0 <= layer < lm.n_layers:
        raise ValueError(f"layer {layer} is not a block of this model (0..{lm.n_layers - 1})")
    k = cfg.top_k or default_top_k(lm)
    means = mean_head_outputs(lm, sample_icl_prompts(train, base.template, cfg.n_prompts, n_demos, seed),
                              cfg.batch_size, progress)
    prompts, golds = shuffled_label_prompts(train, base.template, cfg.n_corrupted, n_demos, seed)
    aie = indirect_effects(lm, base, prompts, golds, means, cfg.batch_size, progress)
    fv = project_heads(lm, means, top_heads(aie, k))
    meta = FunctionVectorMeta(task=train.name, **built_fields(lm, answering), layer=layer, top_k=k,
                              n_prompts=cfg.n_prompts, n_corrupted=cfg.n_corrupted, n_demos=n_demos,
                              build_s=time.perf_counter() - t0, seed=seed)
    return FunctionVectorMethod(lm, FunctionVectorState(fv, aie, meta, lm.fingerprint))


class FunctionVectorMethod(LastTokenEdit):
    name = "function-vector"
    STATE = FunctionVectorState
    state: FunctionVectorState
    edit = staticmethod(add_at)


def neutral(method: FunctionVectorMethod) -> FunctionVectorMethod:
    """A zero vector added at the same block."""
    state = method.state
    return FunctionVectorMethod(method.lm, replace(state, fv=torch.zeros_like(state.fv)))


SPEC = stateful_spec(
    FunctionVectorMethod, title="Function vector", config=FunctionVectorConfig, build=build, kind="implicit",
    neutral=neutral,
    description="the summed mean outputs of the heads with the largest causal effect, added at the last token",
    view=MethodView("fv", "icr_app.methods.function_vector.figures:aie_figure",
                    "icr_app.methods.function_vector.figures:summary",
                    notes="icr_app.methods.function_vector.figures:overlap_text"),
    strings=folder_strings(__file__),
)
