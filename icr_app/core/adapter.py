"""Where each decoder family keeps the parts that the methods and analyses touch.

Every method and analysis reaches into a model through its `Adapter`: the decoder blocks, the per-head attention
output (the input of the attention's output projection: `o_proj`, GPT-2's `c_proj`, GPT-NeoX's `dense`),
the pre-RoPE queries and keys (split out of fused `qkv_proj` / `c_attn` / `query_key_value` outputs), the
MLP's first matrices (a fused `gate_up_proj` split into its halves; a non-gated `c_fc` or `dense_h_to_4h`),
the MLP branch as it is added to the residual stream, and sliding attention windows.

Families differ in four ways that matter here:
- where the blocks live (`model.layers`, `transformer.h`, `gpt_neox.layers`) and what the attention and its
  projections are called;
- how q, k and v come out: separate projections, one fused `[q | k | v]` output (Phi-3, GPT-2), or one output
  interleaved per head (GPT-NeoX: for each head `[q_h | k_h | v_h]`);
- how the MLP branch joins the residual stream: `y = r + mlp(norm(r))` (pre-norm), `y = r + norm(mlp(·))`
  (Gemma-3 and OLMo-2 normalise the branch), or GPT-NeoX's parallel `y = x + attn(·) + mlp(norm(x))`; in every
  case the residual the branch is added to is `r = y − branch`, which is what the rank-1 analysis patches;
- GPT-2 keeps its weights as Conv1D, `(in, out)`, the transpose of a Linear's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

import torch
from torch import nn
from transformers import PreTrainedModel

from icr_app.core.errors import UserError

QKLayout = Literal["separate", "fused", "interleaved"]


@dataclass(frozen=True)
class Family:
    """The names one decoder family gives the parts listed in the module docstring."""

    blocks: str  # dotted path from the *ForCausalLM model to the ModuleList of blocks
    attention: str  # attribute of a block
    head_out: str  # attribute of the attention module; its input is the heads' outputs, concatenated
    qk: QKLayout
    qk_modules: tuple[str, ...]  # attributes of the attention module that produce q and k
    mlp_first: tuple[tuple[str, str], ...]  # (name, parameter path under the block) of the MLP's first matrices
    fused_mlp: bool = False  # one parameter holds [gate; up] (Phi-3)
    conv1d: bool = False  # GPT-2: weights stored (in, out)
    branch: str = "mlp"  # the module whose output is the MLP branch as added to the residual stream
    lora_targets: tuple[str, ...] = ("q_proj", "v_proj")
    # GPT-2 and GPT-NeoX have one key/value head per query head whatever a config saved by another tool says
    grouped_kv: bool = True


_LLAMA = Family(blocks="model.layers", attention="self_attn", head_out="o_proj", qk="separate",
                qk_modules=("q_proj", "k_proj"),
                mlp_first=(("gate", "mlp.gate_proj.weight"), ("up", "mlp.up_proj.weight")))
_NORMED_BRANCH = replace(_LLAMA, branch="post_feedforward_layernorm")

FAMILIES: dict[str, Family] = {
    "llama": _LLAMA,
    "mistral": _LLAMA,
    "qwen2": _LLAMA,
    "qwen3": _LLAMA,
    "gemma3_text": _NORMED_BRANCH,
    "olmo2": _NORMED_BRANCH,
    "phi3": Family(blocks="model.layers", attention="self_attn", head_out="o_proj", qk="fused",
                   qk_modules=("qkv_proj",), mlp_first=(("gate_up", "mlp.gate_up_proj.weight"),), fused_mlp=True,
                   lora_targets=("qkv_proj",)),
    "gpt2": Family(blocks="transformer.h", attention="attn", head_out="c_proj", qk="fused", qk_modules=("c_attn",),
                   mlp_first=(("fc", "mlp.c_fc.weight"),), conv1d=True, lora_targets=("c_attn",),
                   grouped_kv=False),
    "gpt_neox": Family(blocks="gpt_neox.layers", attention="attention", head_out="dense", qk="interleaved",
                       qk_modules=("query_key_value",), mlp_first=(("fc", "mlp.dense_h_to_4h.weight"),),
                       lora_targets=("query_key_value",), grouped_kv=False),
}
FAMILY_NAMES = {"llama": "Llama", "mistral": "Mistral", "qwen2": "Qwen2", "qwen3": "Qwen3", "gemma3_text": "Gemma-3",
                "olmo2": "OLMo-2", "phi3": "Phi-3", "gpt2": "GPT-2", "gpt_neox": "GPT-NeoX"}


class UnsupportedModelError(UserError):
    """A model whose architecture the adapter does not know."""


def _in_features(module: nn.Module) -> int:
    return module.in_features if isinstance(module, nn.Linear) else module.get_parameter("weight").shape[0]  # Conv1D


@dataclass(frozen=True)
class Projection:
    """One of the MLP's first matrices as W (out, in): a whole weight, or the rows of a fused one."""

    name: str  # "gate", "up" (gated MLPs) or "fc" (GPT-2, GPT-NeoX)
    param: str  # parameter path under the block
    rows: slice
    transposed: bool  # the parameter is stored (in, out)

    def matrix(self, block: nn.Module) -> torch.Tensor:
        w = block.get_parameter(self.param)
        return (w.T if self.transposed else w)[self.rows]


class Adapter:
    """The parts of one loaded model, by layer index (see the module docstring)."""

    def __init__(self, model: PreTrainedModel) -> None:
        cfg: Any = model.config  # each family's own fields (num_attention_heads, ...), read by name
        self.model_type = cfg.model_type
        if self.model_type not in FAMILIES:
            raise UnsupportedModelError("model.unsupported", model_type=self.model_type,
                                        families=", ".join(FAMILY_NAMES.values()))
        self.family = FAMILIES[self.model_type]
        self.model = model
        self.blocks = cast(nn.ModuleList, model.get_submodule(self.family.blocks))
        self.n_layers = len(self.blocks)
        self.n_heads = cfg.num_attention_heads
        grouped = self.family.grouped_kv and getattr(cfg, "num_key_value_heads", None)
        self.n_kv_heads = grouped or self.n_heads
        self.head_dim = _in_features(self.head_out(0)) // self.n_heads  # not hidden // H: Gemma-3 and Qwen3 differ
        first = self.family.mlp_first
        self.projections: tuple[Projection, ...]
        if self.family.fused_mlp:  # [gate; up], each intermediate_size rows
            half = cfg.intermediate_size
            self.projections = (Projection("gate", first[0][1], slice(0, half), False),
                                Projection("up", first[0][1], slice(half, 2 * half), False))
        else:
            self.projections = tuple(Projection(name, path, slice(None), self.family.conv1d) for name, path in first)

    @property
    def name(self) -> str:
        return FAMILY_NAMES[self.model_type]

    @property
    def body(self) -> nn.Module:
        """The decoder without its output head: called like the model, it returns the final hidden states."""
        return self.model.base_model

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """The model's own logits from final hidden states (B, T, D): its output head, then Gemma's final
        soft-capping where the config sets one, as every supported family's `*ForCausalLM.forward` does."""
        logits = self.model.get_output_embeddings()(hidden)
        cap = getattr(self.model.config, "final_logit_softcapping", None)
        return logits if cap is None else torch.tanh(logits / cap) * cap

    def attention(self, layer: int) -> nn.Module:
        return getattr(self.blocks[layer], self.family.attention)

    def head_out(self, layer: int) -> nn.Module:
        """The attention's output projection: its input (B, T, H·d_h) holds each head's output, heads contiguous."""
        return getattr(self.attention(layer), self.family.head_out)

    def mlp(self, layer: int) -> nn.Module:
        return self.blocks[layer].get_submodule("mlp")

    def branch(self, layer: int) -> nn.Module:
        """The module whose output is the MLP branch exactly as the block adds it to the residual stream."""
        return self.blocks[layer].get_submodule(self.family.branch)

    def qk_modules(self, layer: int) -> list[nn.Module]:
        attn = self.attention(layer)
        return [getattr(attn, name) for name in self.family.qk_modules]

    def split_qk(self, outputs: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """Pre-RoPE q (B, T, H·d_h) and k (B, T, H_kv·d_h) from the outputs of `qk_modules(layer)`, in order."""
        if self.family.qk == "separate":
            return outputs[0], outputs[1]
        out = outputs[0]
        d_q, d_k = self.n_heads * self.head_dim, self.n_kv_heads * self.head_dim
        if self.family.qk == "fused":
            return out[..., :d_q], out[..., d_q: d_q + d_k]
        per_head = out.view(*out.shape[:-1], self.n_heads, 3 * self.head_dim)
        return (per_head[..., : self.head_dim].flatten(-2), per_head[..., self.head_dim: 2 * self.head_dim].flatten(-2))

    def sliding_window(self, layer: int) -> int | None:
        """The attention window of `layer` in tokens, None for full attention."""
        cfg = self.model.config
        window = getattr(cfg, "sliding_window", None)
        types = getattr(cfg, "layer_types", None)
        if types is not None:
            return window if types[layer] == "sliding_attention" else None
        return window

    def patched_weights(self, layer: int, deltas: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """Parameters of block `layer` (paths under the block) with ΔW (out, in) added to each named projection,
        laid out as the parameters are stored (row slices of a fused weight, transposed for Conv1D)."""
        block = self.blocks[layer]
        out: dict[str, torch.Tensor] = {}
        for proj in self.projections:
            if proj.name not in deltas:
                continue
            base = out.get(proj.param, block.get_parameter(proj.param))
            delta = deltas[proj.name].T if proj.transposed else deltas[proj.name]
            full = torch.zeros_like(base)
            if proj.transposed:
                full[:, proj.rows] = delta
            else:
                full[proj.rows] = delta
            out[proj.param] = base + full
        return out

    @contextmanager
    def pre_rope_qk(self, layers: list[int]) -> Iterator[PreRopeQK]:
        """While active, `qk[layer]` is the current forward call's pre-RoPE (q, k) of each layer in `layers`;
        it is complete once that layer's attention function runs, which is when routing and PIDs read it."""
        from icr_app.core.trace import Trace

        targets = {(layer, i): m for layer in layers for i, m in enumerate(self.qk_modules(layer))}
        with Trace(targets, retain_output=True) as trace:
            yield PreRopeQK(self, trace)


class PreRopeQK:
    """The pre-RoPE q and k of the layers an `Adapter.pre_rope_qk` block traces, split on access."""

    def __init__(self, adapter: Adapter, trace) -> None:
        self.adapter, self.trace = adapter, trace

    def __getitem__(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        n = len(self.adapter.family.qk_modules)
        return self.adapter.split_qk([self.trace[(layer, i)].output for i in range(n)])
