"""Demonstrations run once into a KV cache, then every query answered against it.

Keys are cached after RoPE, so a cache cut down to some positions still encodes where each kept token
was; query tokens must therefore keep their ORIGINAL positions (they start at the full prefix
length, not at the number of kept entries). Token ids come from tokenizing each whole prompt and
splitting it at the demonstrations' end, so the ids are exactly those of the full few-shot prompt
(tokenizing the prefix alone can merge its trailing separator differently).
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

import torch
from transformers import DynamicCache

from icr_app.anchors.prompt import AnchorPrompt
from icr_app.models import LoadedModel
from icr_app.scoring import pad_left


@dataclass
class DemoCache:
    """The demonstrations' keys and values (batch 1) at the kept positions, in order."""

    layers: list[tuple[torch.Tensor, torch.Tensor]]
    prefix_len: int  # the first query token's position
    kept: list[int]

    def batch(self, lm: LoadedModel, n: int) -> DynamicCache:
        """A fresh cache holding n copies (the model appends the queries to it in place)."""
        cache = DynamicCache(config=lm.model.config)
        for i, (k, v) in enumerate(self.layers):
            cache.update(k.expand(n, -1, -1, -1).contiguous(), v.expand(n, -1, -1, -1).contiguous(), i)
        return cache


def shared_prefix(prompts: list[AnchorPrompt]) -> tuple[int, ...]:
    """The demonstrations' token ids, which every prompt must share exactly."""
    first = prompts[0]
    ids = first.input_ids[: first.prefix_len]
    for p in prompts:
        if p.input_ids[: p.prefix_len] != ids:
            raise ValueError("the prompts do not share their demonstrations token for token")
    return ids


@torch.no_grad()
def demo_cache(lm: LoadedModel, prefix_ids: tuple[int, ...], keep: list[int] | None = None) -> DemoCache:
    """Run the demonstrations once; keep the KV entries at `keep` (all when None)."""
    cache = DynamicCache(config=lm.model.config)
    with lm.lock:
        lm.model(input_ids=torch.tensor([prefix_ids], device=lm.device), cache=cache, use_cache=True,
                 logits_to_keep=1)
    kept = list(range(len(prefix_ids))) if keep is None else sorted(keep)
    idx = torch.tensor(kept, device=lm.device)
    layers = [(layer.keys.index_select(2, idx), layer.values.index_select(2, idx)) for layer in cache.layers]
    return DemoCache(layers, len(prefix_ids), kept)


def answer_logits(
    lm: LoadedModel, demos: DemoCache, prompts: list[AnchorPrompt], ctx: AbstractContextManager | None = None
) -> torch.Tensor:
    """Last-position logits (B, V) of each prompt's query part against the cached demonstrations.

    Queries are left-padded; the padding sits between the cache and the query and is masked out.
    `ctx` (e.g. a custom attention) is active for this pass only, under the model lock.
    """
    queries = [p.input_ids[p.prefix_len:] for p in prompts]
    enc = pad_left(lm, [list(q) for q in queries])
    ids, qmask = enc.input_ids, enc.attention_mask
    mask = torch.cat([torch.ones(len(queries), len(demos.kept), dtype=qmask.dtype, device=lm.device), qmask], 1)
    pos = demos.prefix_len + enc.position_ids
    with lm.lock, ctx or nullcontext():
        out = lm.model(input_ids=ids, attention_mask=mask, position_ids=pos, cache=demos.batch(lm, len(queries)),
                       use_cache=True, logits_to_keep=1)
    return out.logits[:, -1].float()
