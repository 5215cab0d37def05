"""Scoped changes to a shared model: hooks and attention functions that are always undone.

Everything here is a context manager that restores the model in `finally`, so an exception inside
the block never leaves a hook or a custom attention behind. Callers hold `LoadedModel.lock` while
the change is live, so concurrent requests never see each other's changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch
from transformers import AttentionInterface, PreTrainedModel
from transformers.masking_utils import AttentionMaskInterface, eager_mask

from icr_app.models import LoadedModel


@contextmanager
def hooks(
    pre: list[tuple[torch.nn.Module, Callable]] | None = None,
    post: list[tuple[torch.nn.Module, Callable]] | None = None,
) -> Iterator[None]:
    """Register forward pre-hooks and forward hooks for the duration of the block."""
    handles = []
    try:
        for module, fn in pre or []:
            handles.append(module.register_forward_pre_hook(fn))
        for module, fn in post or []:
            handles.append(module.register_forward_hook(fn))
        yield
    finally:
        for h in handles:
            h.remove()


def o_proj_modules(lm: LoadedModel) -> list[torch.nn.Module]:
    """Each layer's attention output projection; its input is the head-concatenated attention output."""
    return [layer.self_attn.o_proj for layer in lm.layers]


@contextmanager
def attention_function(model: PreTrainedModel, name: str, fn: Callable) -> Iterator[None]:
    """Use `fn` as the attention of every layer inside the block.

    `fn(module, query, key, value, attention_mask, **kw)` gets `query` (B, H, T, d) after RoPE and
    `key`/`value` (B, H_kv, T, d) before KV repetition. It is paired with transformers' eager mask
    builder, so `attention_mask` is always an explicit additive float mask (B, 1, T, S), padding and
    causality included; without a mask builder a custom name silently gets no padding mask.
    """
    AttentionInterface.register(name, fn)
    AttentionMaskInterface.register(name, eager_mask)
    previous = model.config._attn_implementation
    model.set_attn_implementation(name)
    try:
        yield
    finally:
        model.set_attn_implementation(previous)
        # The registries are process-wide: drop the closure (and whatever tensors it holds).
        AttentionInterface._global_mapping.pop(name, None)
        AttentionMaskInterface._global_mapping.pop(name, None)

