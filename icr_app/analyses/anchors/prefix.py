"""Demonstrations run once into a KV cache, then every query answered against it.

Keys are cached after RoPE, so a cache cut down to some positions still encodes where each kept token
was; query tokens must therefore keep their ORIGINAL positions (they start at the full prefix
length, not at the number of kept entries). Token ids come from tokenizing each whole prompt and
splitting it at the demonstrations' end, so the ids are exactly those of the full few-shot prompt
(tokenizing the prefix alone can merge its trailing separator differently).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import DynamicCache

from icr_app.analyses.anchors.prompt import AnchorPrompt
from icr_app.core.models import LoadedModel
from icr_app.core.scoring import Intervention, cache_kv, no_intervention, pad_left


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


def _full_width(t: torch.Tensor, width: int) -> torch.Tensor:
    """A sliding-window layer's cache holds only its last window − 1 positions: put them back in place with zero
    columns before them, so the rebuilt cache knows the true length (and masks the old columns by its window)."""
    missing = width - t.shape[2]
    return t if missing == 0 else torch.cat([t.new_zeros(*t.shape[:2], missing, t.shape[3]), t], dim=2)


def check_compressible(lm: LoadedModel) -> None:
    """A cache cut to chosen positions needs every layer to see the whole cache: refuse sliding-window models."""
    if any(lm.adapter.sliding_window(layer) is not None for layer in range(lm.n_layers)):
        raise ValueError(f"hidden-anchor compression keeps chosen cache positions in every layer, and {lm.name} "
                         "has sliding-window layers that only ever see their last few tokens; it is not defined "
                         "for this model")


@torch.no_grad()
def demo_cache(lm: LoadedModel, prefix_ids: tuple[int, ...], keep: list[int] | None = None) -> DemoCache:
    """Run the demonstrations once; keep the KV entries at `keep` (all when None).

    Keeping only some positions is refused for a model with sliding-window layers: those layers see just the
    last tokens before the query, so a cache cut to chosen positions has no meaning there.
    """
    if keep is not None:
        check_compressible(lm)
    cache = DynamicCache(config=lm.model.config)
    with lm.lock:
        lm.model(input_ids=torch.tensor([prefix_ids], device=lm.device), cache=cache, use_cache=True,
                 logits_to_keep=1)
    kept = list(range(len(prefix_ids))) if keep is None else sorted(keep)
    idx = torch.tensor(kept, device=lm.device)
    width = len(prefix_ids)
    layers = [(_full_width(keys, width).index_select(2, idx.to(keys.device)),  # each layer's device
               _full_width(values, width).index_select(2, idx.to(values.device))) for keys, values in cache_kv(cache)]
    return DemoCache(layers, len(prefix_ids), kept)


def answer_logits(
    lm: LoadedModel, demos: DemoCache, prompts: list[AnchorPrompt], intervention: Intervention | None = None
) -> torch.Tensor:
    """Last-position logits (B, V) of each prompt's query part against the cached demonstrations.

    Queries are left-padded; the padding sits between the cache and the query and is masked out. A sliding
    window counts cache columns, padding included, so on a model with sliding-window layers only queries of
    the same length share a pass. `intervention` (e.g. an attention edit) is live for these passes only, under
    the model lock.
    """
    queries = [list(p.input_ids[p.prefix_len:]) for p in prompts]
    sliding = any(lm.adapter.sliding_window(layer) is not None for layer in range(lm.n_layers))
    groups: dict[int, list[int]] = {}
    for i, q in enumerate(queries):
        groups.setdefault(len(q) if sliding else 0, []).append(i)
    out = torch.empty(len(queries), lm.model.config.vocab_size, device=lm.device)
    with lm.lock, intervention or no_intervention() as extra:
        for rows in groups.values():
            enc = pad_left(lm, [queries[i] for i in rows])
            ones = torch.ones(len(rows), len(demos.kept), dtype=enc.attention_mask.dtype, device=lm.device)
            logits = lm.model(input_ids=enc.input_ids, attention_mask=torch.cat([ones, enc.attention_mask], 1),
                              position_ids=demos.prefix_len + enc.position_ids, cache=demos.batch(lm, len(rows)),
                              use_cache=True, logits_to_keep=1, **extra).logits
            out[rows] = logits[:, -1].float()
    return out
