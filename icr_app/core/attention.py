"""One attention function for every model ICL Lab loads, registered once with transformers.

`wrap` switches each loaded model to it. Without per-call data it calls its kernel: transformers' SDPA attention
(with SDPA's mask builder), so the plain model is unchanged, or, for a model loaded with
`attn_implementation="eager"`, the attention as explicit matrices (`attention_weights`, what the edits
compute). A method or analysis that reads or changes attention passes an `AttentionEdit` as the forward
keyword `attention_edit=`; transformers hands forward keywords down to every layer's attention call, so the
edit reaches each layer while nothing about it is stored on the shared model.

An edit gets what the attention function gets: `query` (B, H, T, d) after RoPE, `key` and `value`
(B, H_kv, S, d) before KV repetition, the mask as SDPA's builder made it (None when plain causal, else a
boolean (B, 1, T, S) mask that already holds padding and sliding windows), `module.layer_idx`, and the
layer's `scaling`. It returns (output (B, T, H, d), weights or None), as transformers expects.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

import torch
from torch import nn
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import repeat_kv, sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

ATTENTION = "icl_lab"
ATTENTIONS = {"sdpa": ATTENTION, "eager": "icl_lab_eager"}  # ICL Lab's attention function by the kernel it calls


class AttentionEdit(Protocol):
    def __call__(self, module: nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                 attention_mask: torch.Tensor | None, **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor | None]: ...


def _icl_attention(kernel: AttentionEdit) -> AttentionEdit:
    def icl_attention(module: nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                      attention_mask: torch.Tensor | None, attention_edit: AttentionEdit | None = None,
                      **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor | None]:
        edit = kernel if attention_edit is None else attention_edit
        return edit(module, query, key, value, attention_mask, **kwargs)

    return icl_attention


def layer_of(module: nn.Module) -> int:
    """The layer an attention call is for: transformers sets `layer_idx` on every family's attention module."""
    return cast(int, module.layer_idx)


def additive_mask(attention_mask: torch.Tensor | None, query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
    """The mask as an additive float (B or 1, 1, T, S): SDPA's builder leaves None for a plain causal mask (the
    last query row aligned with the last key) and gives booleans otherwise."""
    neg = torch.finfo(query.dtype).min
    if attention_mask is None:
        t, s = query.shape[2], key.shape[2]
        rows = torch.arange(t, device=query.device)[:, None] + (s - t)
        allowed = torch.arange(s, device=query.device)[None, :] <= rows
        return torch.zeros(t, s, dtype=query.dtype, device=query.device).masked_fill(~allowed, neg)[None, None]
    if attention_mask.dtype == torch.bool:
        return torch.zeros(attention_mask.shape, dtype=query.dtype, device=query.device).masked_fill(
            ~attention_mask, neg)
    return attention_mask


def attention_weights(query: torch.Tensor, key: torch.Tensor, attention_mask: torch.Tensor | None,
                      scaling: float | None) -> torch.Tensor:
    """Post-softmax weights (B, H, T, S), the softmax in at least fp32 as transformers' eager path does."""
    k = repeat_kv(key, query.shape[1] // key.shape[1])
    scale = scaling if scaling is not None else query.shape[-1] ** -0.5
    scores = torch.matmul(query, k.transpose(2, 3)) * scale + additive_mask(attention_mask, query, key)
    return torch.softmax(scores, dim=-1, dtype=torch.promote_types(query.dtype, torch.float32)).to(query.dtype)


def attend(weights: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """Weighted values in the (B, T, H, d) layout that the attention layers expect back."""
    out = torch.matmul(weights, repeat_kv(value, weights.shape[1] // value.shape[1]))
    return out.transpose(1, 2).contiguous()


def _eager(module: nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
           attention_mask: torch.Tensor | None, scaling: float | None = None,
           **_: Any) -> tuple[torch.Tensor, torch.Tensor]:
    weights = attention_weights(query, key, attention_mask, scaling)
    return attend(weights, value), weights


for _name, _kernel in ((ATTENTION, sdpa_attention_forward), (ATTENTIONS["eager"], _eager)):
    AttentionInterface.register(_name, _icl_attention(_kernel))
    AttentionMaskInterface.register(_name, sdpa_mask)
