"""What task vectors and function vectors share: an edit of the last token's state after one block.

Both are a vector (d,) built from few-shot prompts and applied to a zero-shot query's last-token state after
block `l` (`LastTokenEdit`: a task vector replaces that state, a function vector adds to it), and both choose
what they keep by running many variants of the same prompt that differ at the last token only (a task vector
per layer, a function vector per head). A patch at the last token leaves every earlier position alone, so each
prompt's prefix runs once into a KV cache and then its last token runs once per variant, all variants of a
prompt in one forward pass (`last_token_variants`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import torch
from torch import nn
from transformers import DynamicCache

from icr_app.core.capture import blocks
from icr_app.core.models import LoadedModel
from icr_app.core.prefix import PrefixPool
from icr_app.core.progress import Progress, no_progress
from icr_app.core.scoring import Intervention, first_token_id, fits_every_window, pad_left, prefill
from icr_app.core.tasks import Example
from icr_app.core.trace import Trace, main_tensor, with_main
from icr_app.methods.base import Method
from icr_app.methods.state import BuiltMeta, BuiltState, StatefulMethod

VariantEdit = Callable[[Any, torch.Tensor, torch.Tensor], torch.Tensor]  # the key of `targets` it edits at
"""edit(key, v, variants) -> v': `v` (B, C, width) is what the traced module `key` sees (or returns) at the last
token of each of B prompts in each of the C variants numbered `variants` (C,); return it changed (a new tensor)."""


@dataclass
class VariantScores:
    """Per prompt and variant: the probability of the gold first token and whether it is the argmax."""

    gold_prob: torch.Tensor  # (P, N)
    hit: torch.Tensor  # (P, N) bool


def _score(logits: torch.Tensor, gold: torch.Tensor, candidates: torch.Tensor | None) -> tuple[torch.Tensor, ...]:
    """logits (B, C, V), gold (B,) indices into candidates (or token ids) -> gold probability, hit (B, C)."""
    if candidates is not None:
        logits = logits[..., candidates]
    gold = gold[:, None, None].expand(*logits.shape[:2], 1)
    gold_logit = logits.gather(-1, gold)[..., 0]
    return (gold_logit - torch.logsumexp(logits, -1)).exp(), logits.argmax(-1) == gold[..., 0]


@torch.no_grad()
def last_token_variants(lm: LoadedModel, prompts: list[str], gold: torch.Tensor, candidates: list[int] | None,
                        n_variants: int, targets: Mapping[Any, nn.Module], edit: VariantEdit,
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
    shape: dict[str, Any] = {}  # the running forward's layout, read by the hooks

    def by_variant(x: torch.Tensor) -> torch.Tensor:
        return x.reshape(shape["b"], len(shape["variants"]), x.shape[-1])

    def edit_in(key: Hashable, x: torch.Tensor) -> torch.Tensor:
        return edit(key, by_variant(x), shape["variants"].to(x.device)).reshape(x.shape)  # the layer's device

    def edit_out(key: Hashable, out: Any) -> Any:
        x = main_tensor(out)
        return with_main(out, edit(key, by_variant(x), shape["variants"]).reshape(x.shape))

    hooks = {"edit_input": edit_in} if where == "input" else {"edit_output": edit_out}
    for rows in progress(batches, desc=desc):
        with lm.lock:
            for sub, variants, run in _variant_passes(lm, prompts, ids, rows, n_variants, chunk):
                shape["b"], shape["variants"] = len(sub), variants
                with Trace(targets, **hooks):
                    logits = run()
                p, h = _score(logits.view(len(sub), len(variants), -1).float(), gold[sub], cand)
                at = (torch.tensor(sub)[:, None], variants.cpu()[None, :])
                gold_prob[at], hit[at] = p.cpu(), h.cpu()
    return VariantScores(gold_prob, hit)


VariantPass = tuple[list[int], torch.Tensor, Callable[[], torch.Tensor]]
"""(prompts, variants, run): run() returns the logits (len(prompts) · len(variants), V) of those variants of
those prompts' last tokens, prompt-major."""


def _variant_passes(lm: LoadedModel, prompts: list[str], ids: list[list[int]], rows: list[int], n_variants: int,
                    chunk: int) -> Iterator[VariantPass]:
    """The passes that score every variant of the prompts `rows`: all the rows at once over one cache, `chunk`
    variants a pass; or, where a sliding window is too short for that, one prompt at a time over a `PrefixPool`,
    as many variants a pass as its bound on copied cache allows (so the pass is never split under the hooks)."""
    batch = [ids[i] for i in rows]
    enc = pad_left(lm, [x[:-1] for x in batch])
    if fits_every_window(lm, enc.input_ids.shape[1] + min(chunk, n_variants)):
        cache = DynamicCache(config=lm.model.config)
        prefill(lm, enc, cache)
        last = torch.tensor([x[-1] for x in batch], device=lm.device)

        def run(c: int) -> torch.Tensor:
            logits = _variant_pass(lm, enc.attention_mask, enc.lengths, last, c, cache)
            cache.crop(-c)
            return logits

        for variants in torch.arange(n_variants, device=lm.device).split(chunk):
            yield rows, variants, functools.partial(run, len(variants))
        return
    pool = PrefixPool(lm, [prompts[i] for i in rows], batch_size=len(rows))
    for j, row in enumerate(rows):
        per_pass = min(chunk, pool.rows_per_pass(torch.tensor([j], device=lm.device)))
        for variants in torch.arange(n_variants, device=lm.device).split(per_pass):
            yield [row], variants, functools.partial(pool.last_logits, torch.full_like(variants, j))


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


Combine = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
"""combine(x, v) -> x': a last-token state x (..., d) with the vector v (d,) applied (written over, or added)."""


def layer_sweep(lm: LoadedModel, method: Method, states: torch.Tensor, val: list[Example], combine: Combine,
                batch_size: int = 4, progress: Progress = no_progress, desc: str = "layer sweep") -> VariantScores:
    """Validation scores (P, L + 1) of each block's vector in `states` (L, d) applied by `combine` to the zero-shot
    last-token state at that block; column L is the unpatched zero-shot pass."""
    gold, candidates = gold_and_candidates(lm, method, [e.output for e in val])
    states = states.to(lm.device)

    def patch(layer: int, v: torch.Tensor, variants: torch.Tensor) -> torch.Tensor:
        changed = combine(v, states[layer].to(v.device, v.dtype))
        return torch.where((variants == layer)[None, :, None], changed, v)

    return last_token_variants(lm, [method.prompt(e.input) for e in val], gold, candidates, lm.n_layers + 1,
                               blocks(lm), patch, "output", batch_size, progress=progress, desc=desc)


def best_layer(accuracy: torch.Tensor, gold_prob: torch.Tensor) -> int:
    """The most accurate layer; among equally accurate ones, the highest mean gold probability."""
    top = accuracy == accuracy.max()
    return int(torch.where(top, gold_prob, torch.full_like(gold_prob, -1.0)).argmax())


@contextmanager
def edit_block_output(lm: LoadedModel, layer: int, fn: Callable[[torch.Tensor], torch.Tensor],
                      ) -> Iterator[dict[str, Any]]:
    """An intervention: block `layer`'s output x (B, T, d) becomes fn(x) in every forward pass inside."""
    with Trace({layer: lm.adapter.blocks[layer]}, edit_output=lambda _key, out: with_main(out, fn(main_tensor(out)))):
        yield {}


def replace_last(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """x (B, T, d) with every row's last position replaced by v (d,) (left-padded: its last real token)."""
    return torch.cat([x[:, :-1], v.to(x.device, x.dtype).expand(x.shape[0], 1, -1)], dim=1)


def add_at(x: torch.Tensor, v: torch.Tensor, position: int = -1) -> torch.Tensor:
    """x (B, T, d) with v (d,) added at one position of every row: by default the last (left-padded: its last real
    token); a new tensor, so a gradient reaches v."""
    p = position % x.shape[1]
    return torch.cat([x[:, :p], x[:, p: p + 1] + v.to(x.device, x.dtype), x[:, p + 1:]], dim=1)


def gold_and_candidates(lm: LoadedModel, method: Method, outputs: list[str]) -> tuple[torch.Tensor, list[int] | None]:
    """Gold first tokens of `outputs` as indices into the candidates: the labels' distinct first tokens for
    classification (None for open tasks: indices are token ids over the whole vocabulary)."""
    ids = [first_token_id(lm, y, method.template) for y in outputs]
    if method.label_set is None:
        return torch.tensor(ids), None
    candidates = list(dict.fromkeys(method.label_set.first_ids))
    return torch.tensor([candidates.index(i) for i in ids]), candidates


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
