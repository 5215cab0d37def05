"""Attention written out in two steps, so an experiment can read or rescale the post-softmax weights.

Saliency and anchor re-weighting both act on `A = softmax(QKᵀ/√d + mask)` between the two steps;
everything else about the layer (RoPE, GQA, the cache) stays transformers' own.
"""

from __future__ import annotations

import torch
from transformers.integrations.sdpa_attention import repeat_kv


def attention_weights(
    module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, attention_mask: torch.Tensor | None,
    scaling: float | None,
) -> torch.Tensor:
    """Post-softmax weights (B, H, T, S), softmax in at least fp32 as transformers' eager path does."""
    k = repeat_kv(key, module.num_key_value_groups)
    scores = torch.matmul(query, k.transpose(2, 3)) * (scaling if scaling is not None else query.shape[-1] ** -0.5)
    if attention_mask is not None:
        scores = scores + attention_mask
    return torch.softmax(scores, dim=-1, dtype=torch.promote_types(query.dtype, torch.float32)).to(query.dtype)


def attend(module: torch.nn.Module, weights: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """Weighted values in the (B, T, H, d) layout the attention layers expect back."""
    out = torch.matmul(weights, repeat_kv(value, module.num_key_value_groups))
    return out.transpose(1, 2).contiguous()
