"""ICR attention routing (icr_app/methods/icr/README.md): a low-rank, per-head-gated bias on the attention logits.

At each routed layer l and head h the logits become

    S[l,h] = Q_h K_hᵀ/√d_h + mask + γ[l,h] · (Q U_q[l]) diag(α[l]) (K U_k[l])ᵀ

where Q (B, T, H·d_h) and K (B, S, H_kv·d_h) are the layer's head-concatenated projections (keys are
not repeated over GQA groups: U_k lives in the k_proj output space) and the bias is not divided by √d_h.
α (B, L_r, r) and γ (B, L_r, H) are per batch row, so each query gets its own routing. An ensemble of M
routers on the same PIDs gives α (B, M, L_r, r) and γ (B, M, L_r, H); its bias is the mean of the members'
biases, (Q U_q) diag(mean_m γ_m[l,h]·α_m[l]) (K U_k)ᵀ, still one forward pass of the model.

Two choices are settled by measurement (BENCHMARKS.md, "## ICR"):
- `rope="pre"` (default): Q and K are the query/key projections' outputs (`Adapter.pre_rope_qk`, fused
  projections split). Position-free, like the PID vectors pooled over prompts of different lengths, and
  rank-8 pre-RoPE PIDs hold more of the ICL shift of q and k than post-RoPE ones. "post" uses the rotated
  vectors.
- `rows`: "all" biases every query row (the paper's equations); "last" only the answer position (left
  padding puts it at -1; the paper's appendix). "all" transferred better to unseen tasks, so `icr train`
  defaults to it and the shipped router uses it.

Routing is an attention edit (`core.attention`) passed with the forward call: at routed layers the bias is
added to the mask made additive and the sum goes through transformers' SDPA path, so the causal, padding and
sliding-window masks are kept, GQA is handled by SDPA, and gradients reach α and γ through the mask. Other
layers run plain SDPA. With α = 0 or γ = 0 the logits are unchanged and the model is the plain model
(tested). Routing is meant for the prefill: pre-RoPE keys are those of the current forward call, so a KV
cache from before is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import nn
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from icr_app.core.adapter import PreRopeQK
from icr_app.core.attention import additive_mask, layer_of
from icr_app.core.models import LoadedModel

Rope = Literal["pre", "post"]
Rows = Literal["last", "all"]


@dataclass
class Routes:
    """Everything the attention edit needs for one batch; tensors indexed by routed-layer position."""

    layers: tuple[int, ...]
    u_q: torch.Tensor  # (L_r, d_q, r)
    u_k: torch.Tensor  # (L_r, d_k, r)
    alpha: torch.Tensor  # (B, L_r, r), or (B, M, L_r, r) for an ensemble of M routers
    gamma: torch.Tensor  # (B, L_r, H), or (B, M, L_r, H)
    rope: Rope = "pre"
    rows: Rows = "last"


def route_bias(q: torch.Tensor, k: torch.Tensor, u_q: torch.Tensor, u_k: torch.Tensor,
               alpha: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    """γ[h]·(q U_q) diag(α) (k U_k)ᵀ per row: q (B, T, d_q), k (B, S, d_k) -> (B, H, T, S).

    α (B, r) and γ (B, H) for one router; (B, M, r) and (B, M, H) for M members, whose biases are averaged.
    """
    # In fp32 on the layer's device, whatever the model's dtype and device map: the router trains in fp32, and
    # its gradient through a bf16 product would round away.
    q, k = q.float(), k.float()
    u_q, u_k, alpha, gamma = (t.to(q.device, torch.float32) for t in (u_q, u_k, alpha, gamma))
    b = q.shape[0]
    alpha, gamma = alpha.reshape(b, -1, alpha.shape[-1]), gamma.reshape(b, -1, gamma.shape[-1])
    per_head = torch.einsum("bmh,bmr->bhr", gamma, alpha) / alpha.shape[1]  # (B, H, r)
    return torch.einsum("btr,bhr,bsr->bhts", q @ u_q, per_head, k @ u_k)


def heads_concat(x: torch.Tensor) -> torch.Tensor:
    """(B, heads, T, d) -> (B, T, heads·d), heads contiguous like the projections' outputs."""
    b, h, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, h * d)


class RoutingEdit:
    """The attention edit of one routed forward call."""

    def __init__(self, routes: Routes, pre_qk: PreRopeQK | None) -> None:
        self.routes, self.pre_qk = routes, pre_qk
        self.slot = {layer: j for j, layer in enumerate(routes.layers)}

    def __call__(self, module: nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                 attention_mask: torch.Tensor | None, **kw: Any) -> tuple[torch.Tensor, None]:
        j = self.slot.get(layer_of(module))
        if j is None:
            return sdpa_attention_forward(module, query, key, value, attention_mask, **kw)
        routes = self.routes
        if self.pre_qk is not None:
            q, k = self.pre_qk[layer_of(module)]
            if k.shape[1] != key.shape[2]:
                raise RuntimeError("ICR routing with pre-RoPE keys works on a prefill without an earlier cache")
        else:
            q, k = heads_concat(query), heads_concat(key)
        mask = additive_mask(attention_mask, query, key)
        alpha, gamma = routes.alpha[..., j, :], routes.gamma[..., j, :]
        if routes.rows == "last":
            bias = route_bias(q[:, -1:], k, routes.u_q[j], routes.u_k[j], alpha, gamma)
            b, h, t, s = query.shape[0], query.shape[1], query.shape[2], key.shape[2]
            mask = torch.cat([mask[:, :, :-1].expand(b, h, t - 1, s), mask[:, :, -1:] + bias], dim=2)
        else:
            mask = mask + route_bias(q, k, routes.u_q[j], routes.u_k[j], alpha, gamma)
        return sdpa_attention_forward(module, query, key, value, mask.to(query.dtype), **kw)


@contextmanager
def routing(lm: LoadedModel, routes: Routes) -> Iterator[dict[str, Any]]:
    """The intervention that applies `routes` to the forward call it wraps (the runner holds `lm.lock`)."""
    if routes.rope == "pre":
        with lm.adapter.pre_rope_qk(list(routes.layers)) as qk:
            yield {"attention_edit": RoutingEdit(routes, qk)}
    else:
        yield {"attention_edit": RoutingEdit(routes, None)}
