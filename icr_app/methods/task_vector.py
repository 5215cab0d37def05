"""Task vectors (Hendel et al., 2023): a few-shot prompt's last-token state at one layer, patched into zero-shot.

Build: run few-shot prompts of the task (the train split's examples, the project's `Template`, each ending in
a dummy query that is not one of its demonstrations) and average the residual stream after every block at the
last token. A layer sweep on a validation part of the train split then picks the block `l` whose vector,
written over the zero-shot query's own last-token state there (REPLACED, as in the paper), gets the most
validation queries right (first token, over the labels' first tokens for classification and the vocabulary
for open tasks; ties go to the higher mean probability of the gold token). Answering is a zero-shot pass with
that one patch, so it costs about zero-shot.

The sweep and function vectors' indirect effects share `last_token_variants`: a patch at the last token
leaves every earlier position alone, so each prompt's prefix runs once into a KV cache and then its last token
runs once per variant (per layer here, per head there), all variants of a prompt in one forward pass.

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
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import torch
from torch import nn
from transformers import DynamicCache

from icr_app.core.capture import blocks, last_token_means
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import sample_icl_prompts
from icr_app.core.scoring import Intervention, first_token_id, fits_every_window, pad_left, prefill
from icr_app.core.tasks import Example, Task
from icr_app.core.trace import Trace, main_tensor
from icr_app.methods.base import Answering, BuildContext, Method
from icr_app.methods.site.train import PrefixPool
from icr_app.methods.state import BuiltMeta, BuiltState, StatefulMethod, built_fields, stateful_spec, tensor_field

VariantEdit = Callable[[Hashable, torch.Tensor, torch.Tensor], torch.Tensor]
"""edit(key, v, variants) -> v': `v` (B, C, width) is what the traced module `key` sees (or returns) at the last
token of each of B prompts in each of the C variants numbered `variants` (C,); return it changed (a new tensor)."""


@dataclass
class VariantScores:
    """Per prompt and variant: the probability of the gold first token and whether it is the argmax."""

    gold_prob: torch.Tensor  # (P, N)
    hit: torch.Tensor  # (P, N) bool


def with_main(output: Any, x: torch.Tensor) -> Any:
    """A module's output with its hidden states (the output itself, or its first element) replaced by x."""
    return (x, *output[1:]) if isinstance(output, tuple) else x


def _score(logits: torch.Tensor, gold: torch.Tensor, candidates: torch.Tensor | None) -> tuple[torch.Tensor, ...]:
    """logits (B, C, V), gold (B,) indices into candidates (or token ids) -> gold probability, hit (B, C)."""
    if candidates is not None:
        logits = logits[..., candidates]
    gold = gold[:, None, None].expand(*logits.shape[:2], 1)
    gold_logit = logits.gather(-1, gold)[..., 0]
    return (gold_logit - torch.logsumexp(logits, -1)).exp(), logits.argmax(-1) == gold[..., 0]


@torch.no_grad()
def last_token_variants(lm: LoadedModel, prompts: list[str], gold: torch.Tensor, candidates: list[int] | None,
                        n_variants: int, targets: Mapping[Hashable, nn.Module], edit: VariantEdit,
                        where: Literal["input", "output"] = "output", batch_size: int = 4, chunk: int = 96,
                        progress: Progress = no_progress, desc: str = "variants") -> VariantScores:
    """Score `n_variants` edited versions of each prompt's last token (the edit changes only that token).

    `gold` (P,) indexes `candidates` (the token ids an answer is chosen from; None: the whole vocabulary).
    Each prompt's prefix runs once into a KV cache; then up to `chunk` variants of its last token run as extra
    positions that see the prefix and themselves only (one 4D mask), while `edit` changes what `targets` see
    (`where="input"`) or return there. A sliding-window layer keeps too few keys for that mask, so on such
    models each variant is a row of its own over a rebuilt cache (`PrefixPool`), the same numbers more slowly.
    """
    ids = [lm.tokenizer(p, add_special_tokens=True)["input_ids"] for p in prompts]
    cand = None if candidates is None else torch.tensor(candidates, device=lm.device)
    gold = gold.to(lm.device)
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    batches = [order[s: s + batch_size] for s in range(0, len(order), batch_size)]
    gold_prob = torch.zeros(len(ids), n_variants)
    hit = torch.zeros(len(ids), n_variants, dtype=torch.bool)
    variant_chunks = torch.arange(n_variants, device=lm.device).split(chunk)
    shape: dict[str, Any] = {}  # the running forward's layout, read by the hooks

    def view(x: torch.Tensor) -> torch.Tensor:
        return x.reshape(shape["b"], len(shape["variants"]), x.shape[-1])

    def edit_in(key: Hashable, x: torch.Tensor) -> torch.Tensor:
        return edit(key, view(x), shape["variants"].to(x.device)).reshape(x.shape)  # the layer's device

    def edit_out(key: Hashable, out: Any) -> Any:
        x = main_tensor(out)
        return with_main(out, edit(key, view(x), shape["variants"]).reshape(x.shape))

    hooks = {"edit_input": edit_in} if where == "input" else {"edit_output": edit_out}
    for rows in progress(batches, desc=desc):
        batch = [ids[i] for i in rows]
        b = shape["b"] = len(rows)
        enc = pad_left(lm, [x[:-1] for x in batch])
        last = torch.tensor([x[-1] for x in batch], device=lm.device)
        with lm.lock:
            if fits_every_window(lm, enc.input_ids.shape[1] + min(chunk, n_variants)):
                cache = DynamicCache(config=lm.model.config)
                prefill(lm, enc, cache)
                pool = None
            else:
                pool = PrefixPool(lm, [prompts[i] for i in rows], batch_size=b)
            for variants in variant_chunks:
                shape["variants"] = variants
                c = len(variants)
                with Trace(targets, **hooks):
                    if pool is None:
                        logits = _variant_pass(lm, enc.attention_mask, enc.lengths, last, c, cache)
                        cache.crop(-c)
                    else:
                        logits = pool.last_logits(torch.arange(b, device=lm.device).repeat_interleave(c))
                p, h = _score(logits.view(b, c, -1).float(), gold[rows], cand)
                at = (torch.tensor(rows)[:, None], variants.cpu()[None, :])
                gold_prob[at], hit[at] = p.cpu(), h.cpu()
    return VariantScores(gold_prob, hit)


def _variant_pass(lm: LoadedModel, prefix_mask: torch.Tensor, lengths: torch.Tensor, last: torch.Tensor, c: int,
                  cache: DynamicCache) -> torch.Tensor:
    """Logits (B, C, V) of C copies of each row's last token, each seeing the row's cached prefix and itself."""
    b, dev = last.shape[0], last.device
    seen = torch.cat([prefix_mask.bool()[:, None, None, :].expand(b, 1, c, -1),
                      torch.eye(c, dtype=torch.bool, device=dev)[None, None].expand(b, 1, c, c)], dim=-1)
    dtype = lm.model.dtype
    mask = torch.zeros(seen.shape, dtype=dtype, device=dev).masked_fill(~seen, torch.finfo(dtype).min)
    return lm.model(input_ids=last[:, None].expand(b, c), attention_mask=mask,
                    position_ids=lengths[:, None].expand(b, c), cache=cache, use_cache=True).logits


@contextmanager
def edit_block_output(lm: LoadedModel, layer: int, fn: Callable[[torch.Tensor], torch.Tensor],
                      ) -> Iterator[dict[str, Any]]:
    """An intervention: block `layer`'s output x (B, T, d) becomes fn(x) in every forward pass inside."""
    with Trace({layer: lm.adapter.blocks[layer]}, edit_output=lambda _key, out: with_main(out, fn(main_tensor(out)))):
        yield {}


def replace_last(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """x (B, T, d) with every row's last position replaced by v (d,) (left-padded: its last real token)."""
    return torch.cat([x[:, :-1], v.to(x.device, x.dtype).expand(x.shape[0], 1, -1)], dim=1)


def gold_and_candidates(lm: LoadedModel, method: Method, outputs: list[str]) -> tuple[torch.Tensor, list[int] | None]:
    """Gold first tokens of `outputs` as indices into the candidates: the labels' distinct first tokens for
    classification (None for open tasks: indices are token ids over the whole vocabulary)."""
    ids = [first_token_id(lm, y) for y in outputs]
    if method.label_set is None:
        return torch.tensor(ids), None
    candidates = list(dict.fromkeys(method.label_set.first_ids))
    return torch.tensor([candidates.index(i) for i in ids]), candidates


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
class VectorMeta(BuiltMeta):
    """What a task or function vector stores besides `BuiltMeta`'s fields: where it edits, and its prompts."""

    layer: int  # the block whose output is edited at the last token
    n_prompts: int
    n_demos: int


class LastTokenVector(BuiltState):
    """A built state whose tensor VECTOR (d,) edits the last token's state after block `meta.layer`."""

    VECTOR: ClassVar[str]  # the stored tensor that answering uses
    meta: VectorMeta


@dataclass(kw_only=True)
class TaskVectorMeta(VectorMeta):
    n_val: int
    zero_shot_val_accuracy: float


@dataclass
class TaskVector(LastTokenVector):
    """θ (d,) for block `meta.layer`, and the sweep that chose it: validation accuracy and gold probability (L,)."""

    KIND = "task-vector"
    TITLE = "task vector"
    VECTOR = "theta"
    META = TaskVectorMeta

    theta: torch.Tensor = tensor_field("hidden")
    layer_accuracy: torch.Tensor = tensor_field("layers")
    layer_gold_prob: torch.Tensor = tensor_field("layers")
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


def layer_sweep(lm: LoadedModel, method: Method, states: torch.Tensor, val: list[Example], batch_size: int = 4,
                progress: Progress = no_progress) -> VariantScores:
    """Validation scores (P, L + 1) of each block's vector in `states` (L, d) replacing the zero-shot last-token
    state at that block; column L is the unpatched zero-shot pass."""
    gold, candidates = gold_and_candidates(lm, method, [e.output for e in val])
    states = states.to(lm.device)

    def patch(layer: Hashable, v: torch.Tensor, variants: torch.Tensor) -> torch.Tensor:
        return torch.where((variants == layer)[None, :, None], states[layer].to(v.device, v.dtype), v)

    return last_token_variants(lm, [method.prompt(e.input) for e in val], gold, candidates, lm.n_layers + 1,
                               blocks(lm), patch, "output", batch_size, progress=progress,
                               desc="task vector: layer sweep")


def best_layer(accuracy: torch.Tensor, gold_prob: torch.Tensor) -> int:
    """The most accurate layer; among equally accurate ones, the highest mean gold probability."""
    top = accuracy == accuracy.max()
    return int(torch.where(top, gold_prob, torch.full_like(gold_prob, -1.0)).argmax())


def build_task_vector(lm: LoadedModel, train: Task, answering: Answering | None = None,
                      config: TaskVectorConfig | None = None, shots: int = 10, seed: int = 0,
                      progress: Progress = no_progress) -> TaskVector:
    """Average the prompts' last-token states at every block, sweep the blocks on held-out queries, keep the best."""
    t0 = time.perf_counter()
    cfg = config or TaskVectorConfig()
    answering = answering or Answering.of(lm, train)
    base = Method(lm, answering)
    source, val = holdout(train, cfg.val_size, seed)
    n_demos = min(cfg.n_demos or shots, len(source.examples) - 1)  # a small split leaves fewer to show
    prompts = sample_icl_prompts(source, base.template, cfg.n_prompts, n_demos, seed)
    means = last_token_means(lm, prompts, blocks(lm), "output", cfg.batch_size, progress, "task vector: prompts")
    states = torch.stack([means[layer] for layer in range(lm.n_layers)])
    sweep = layer_sweep(lm, base, states, val, cfg.batch_size, progress)
    accuracy, gold_prob = sweep.hit.float().mean(0), sweep.gold_prob.mean(0)
    layer = best_layer(accuracy[:-1], gold_prob[:-1]) if cfg.layer < 0 else cfg.layer
    if not 0 <= layer < lm.n_layers:
        raise ValueError(f"layer {layer} is not a block of this model (0..{lm.n_layers - 1})")
    meta = TaskVectorMeta(task=train.name, **built_fields(lm, answering), layer=layer, n_prompts=cfg.n_prompts,
                          n_demos=n_demos, n_val=len(val), zero_shot_val_accuracy=float(accuracy[-1]),
                          build_s=time.perf_counter() - t0, seed=seed)
    return TaskVector(states[layer].clone(), accuracy[:-1].clone(), gold_prob[:-1].clone(), meta, lm.fingerprint)


class LastTokenEdit(StatefulMethod):
    """Zero-shot prompts whose last-token state after block `state.meta.layer` is edited with the built vector
    (the tensor `state.VECTOR`) by `edit` (x (B, T, d), v (d,)) -> x': a task vector replaces the state, a
    function vector adds to it."""

    state: LastTokenVector

    def __init__(self, lm: LoadedModel, state: LastTokenVector) -> None:
        super().__init__(lm, state)
        self.vector = getattr(state, state.VECTOR)
        self.stored_parameters = self.vector.numel()  # the sweep / AIE map beside it only explain the choice

    @staticmethod
    def edit(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def intervention(self, queries: list[str]) -> Intervention:
        v = self.vector.to(self.lm.device)
        return edit_block_output(self.lm, self.state.meta.layer, lambda x: self.edit(x, v))


class TaskVectorMethod(LastTokenEdit):
    name = "task-vector"
    STATE = TaskVector
    edit = staticmethod(replace_last)


def build(ctx: BuildContext, config: TaskVectorConfig) -> TaskVectorMethod:
    return TaskVectorMethod(ctx.lm, build_task_vector(ctx.lm, ctx.train, ctx.answering, config, ctx.shots, ctx.seed,
                                                      ctx.progress))


SPEC = stateful_spec(
    TaskVectorMethod, title="Task vector", config=TaskVectorConfig, build=build, kind="implicit",
    description="a few-shot prompt's last-token state at one layer, written over the zero-shot query's there",
    tab="icr_app.methods.task_vector_panel:build_tab",
)
