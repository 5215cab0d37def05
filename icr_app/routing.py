"""ICR attention routing (DESIGN.md §2): a low-rank, per-head-gated bias on the attention logits.

At each routed layer l and head h the logits become

    S[l,h] = Q_h K_hᵀ/√d_h + mask + γ[l,h] · (Q U_q[l]) diag(α[l]) (K U_k[l])ᵀ

where Q (B, T, H·d_h) and K (B, S, H_kv·d_h) are the layer's head-concatenated projections (keys are
not repeated over GQA groups: U_k lives in the k_proj output space) and the bias is not divided by √d_h.
α (B, L_r, r) and γ (B, L_r, H) are per batch row, so each query gets its own routing. An ensemble of M
routers on the same PIDs gives α (B, M, L_r, r) and γ (B, M, L_r, H); its bias is the mean of the members'
biases, (Q U_q) diag(mean_m γ_m[l,h]·α_m[l]) (K U_k)ᵀ, still one forward pass of the model.

Two choices are settled by measurement (BENCHMARKS.md, "## ICR"):
- `rope="pre"` (default): Q and K are the q_proj / k_proj outputs. Position-free, like the PID vectors pooled
  over prompts of different lengths; rank-8 pre-RoPE PIDs hold 1.5x more of the ICL shift of q and k
  (few-shot minus zero-shot, routed layers) than post-RoPE ones. "post" uses the rotated vectors.
- `rows`: "all" biases every query row (the paper's equations); "last" only the answer position (left
  padding puts it at -1; the paper's appendix). In short runs (72 steps) both trained to the same loss and
  scored alike; with 454 steps on 10 domains, "all" scored higher on the unseen tasks (+3.4 vs +1.6
  points at n=100) and in-domain at n=50, so `icr train` defaults to "all" and the shipped router uses it.

The bias is added to the explicit additive mask and the sum goes through transformers' SDPA path, so the
causal and padding masks are kept, GQA is handled by SDPA, and gradients reach α and γ through the mask.
With α = 0 or γ = 0 the mask is unchanged and the model is the plain model (tested). Routing is meant for
the prefill: pre-RoPE keys are those of the current forward call, so a KV cache from before is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Literal

import torch
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from icr_app.hooks import attention_function, hooks
from icr_app.models import LoadedModel

Rope = Literal["pre", "post"]
Rows = Literal["last", "all"]


@dataclass
class Routes:
    """Everything the attention function needs for one batch; tensors indexed by routed-layer position."""

    layers: tuple[int, ...]
    u_q: torch.Tensor  # (L_r, d_q, r)
    u_k: torch.Tensor  # (L_r, d_k, r)
    alpha: torch.Tensor  # (B, L_r, r), or (B, M, L_r, r) for an ensemble of M routers
    gamma: torch.Tensor  # (B, L_r, H), or (B, M, L_r, H)
    rope: Rope = "pre"
    rows: Rows = "last"


def causal_mask(query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
    """Additive causal mask (1, 1, T, S), aligned so the last query row sees every key."""
    t, s = query.shape[2], key.shape[2]
    allowed = torch.arange(s, device=query.device)[None, :] <= torch.arange(t, device=query.device)[:, None] + (s - t)
    return torch.zeros(t, s, dtype=query.dtype, device=query.device).masked_fill(
        ~allowed, torch.finfo(query.dtype).min)[None, None]


def route_bias(q: torch.Tensor, k: torch.Tensor, u_q: torch.Tensor, u_k: torch.Tensor,
               alpha: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    """γ[h]·(q U_q) diag(α) (k U_k)ᵀ per row: q (B, T, d_q), k (B, S, d_k) -> (B, H, T, S).

    α (B, r) and γ (B, H) for one router; (B, M, r) and (B, M, H) for M members, whose biases are averaged.
    """
    b = q.shape[0]
    alpha, gamma = alpha.reshape(b, -1, alpha.shape[-1]), gamma.reshape(b, -1, gamma.shape[-1])
    per_head = torch.einsum("bmh,bmr->bhr", gamma, alpha) / alpha.shape[1]  # (B, H, r)
    return torch.einsum("btr,bhr,bsr->bhts", q @ u_q, per_head, k @ u_k)


def heads_concat(x: torch.Tensor) -> torch.Tensor:
    """(B, heads, T, d) -> (B, T, heads·d), heads contiguous like the projections' outputs."""
    b, h, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, h * d)


@contextmanager
def routing(lm: LoadedModel, routes: Routes) -> Iterator[None]:
    """Apply `routes` to every forward call inside the block (hold `lm.lock` around it)."""
    slot = {layer: j for j, layer in enumerate(routes.layers)}
    pre_qk: dict[tuple[int, str], torch.Tensor] = {}

    def keep(layer: int, which: str):
        def fn(_module: torch.nn.Module, _inputs: tuple, output: torch.Tensor) -> None:
            pre_qk[(layer, which)] = output
        return fn

    def attention(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                  attention_mask: torch.Tensor | None, **kw):
        j = slot.get(module.layer_idx)
        if j is None:
            return sdpa_attention_forward(module, query, key, value, attention_mask, **kw)
        if routes.rope == "pre":
            q, k = pre_qk[(module.layer_idx, "q")], pre_qk[(module.layer_idx, "k")]
            if k.shape[1] != key.shape[2]:
                raise RuntimeError("ICR routing with pre-RoPE keys works on a prefill without an earlier cache")
        else:
            q, k = heads_concat(query), heads_concat(key)
        mask = causal_mask(query, key) if attention_mask is None else attention_mask
        alpha, gamma = routes.alpha[..., j, :], routes.gamma[..., j, :]
        if routes.rows == "last":
            bias = route_bias(q[:, -1:], k, routes.u_q[j], routes.u_k[j], alpha, gamma)
            b, h, t, s = query.shape[0], query.shape[1], query.shape[2], key.shape[2]
            mask = torch.cat([mask[:, :, :-1].expand(b, h, t - 1, s), mask[:, :, -1:] + bias], dim=2)
        else:
            mask = mask + route_bias(q, k, routes.u_q[j], routes.u_k[j], alpha, gamma)
        return sdpa_attention_forward(module, query, key, value, mask.to(query.dtype), **kw)

    with ExitStack() as stack:
        if routes.rope == "pre":
            attn = [lm.layers[layer].self_attn for layer in routes.layers]
            stack.enter_context(hooks(post=[(a.q_proj, keep(a.layer_idx, "q")) for a in attn]
                                      + [(a.k_proj, keep(a.layer_idx, "k")) for a in attn]))
        stack.enter_context(attention_function(lm.model, f"icr_routing_{id(lm.model)}", attention))
        yield
