"""Tiny randomly initialised models of every supported decoder family, built from a config in well under a second.

Each keeps the architectural quirks of its real checkpoints that the methods have to cope with (GQA, a head_dim
that is not hidden/heads, fused projections, post-norm blocks, parallel residual, partial rotary, sliding windows)
at toy size: hidden 64, 4 layers, 4 query heads (2 KV heads where the family has GQA), MLP width 128, 512 positions.
"""

from __future__ import annotations

import torch
from transformers import (
    AutoModelForCausalLM,
    Gemma3TextConfig,
    GPT2Config,
    GPTNeoXConfig,
    LlamaConfig,
    MistralConfig,
    Olmo2Config,
    Phi3Config,
    PreTrainedModel,
    Qwen2Config,
    Qwen3Config,
)

FAMILIES: tuple[str, ...] = ("llama", "qwen2", "qwen3", "mistral", "gemma3", "phi3", "olmo2", "gpt2", "gpt_neox")

HIDDEN = 64
HEADS = 4
KV_HEADS = 2
INTERMEDIATE = 128
MAX_POSITIONS = 512
GEMMA3_SLIDING_WINDOW = 8  # far shorter than ordinary prompts (20-60 tokens), so the window really bites
ODD_HEAD_DIM = 24  # Gemma-3 and Qwen3 have head_dim != hidden / heads (o_proj.in_features = 96 != 64)


def gemma3_layer_types(n_layers: int) -> list[str]:
    """Alternate sliding and full attention, ending on full like real Gemma-3's 5:1 pattern (S F S F for 4 layers)."""
    return ["full_attention" if (i + 1) % 2 == 0 else "sliding_attention" for i in range(n_layers)]


def tiny_config(family: str, tokenizer, n_layers: int = 4, **overrides):
    """The config `tiny_model` builds from; `overrides` replace any of its fields (e.g. mistral sliding_window=8)."""
    vocab = len(tokenizer)
    ids = dict(eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, bos_token_id=None)
    common = dict(
        vocab_size=vocab,
        hidden_size=HIDDEN,
        intermediate_size=INTERMEDIATE,
        num_hidden_layers=n_layers,
        num_attention_heads=HEADS,
        max_position_embeddings=MAX_POSITIONS,
        tie_word_embeddings=True,
        **ids,
    )
    gqa = dict(common, num_key_value_heads=KV_HEADS)
    if family == "llama":
        kw = dict(gqa)
        cls = LlamaConfig
    elif family == "qwen2":
        kw = dict(gqa, use_sliding_window=False)
        cls = Qwen2Config
    elif family == "qwen3":
        kw = dict(gqa, head_dim=ODD_HEAD_DIM, use_sliding_window=False)
        cls = Qwen3Config
    elif family == "mistral":
        kw = dict(gqa, sliding_window=None)
        cls = MistralConfig
    elif family == "gemma3":
        kw = dict(
            gqa,
            head_dim=ODD_HEAD_DIM,
            query_pre_attn_scalar=ODD_HEAD_DIM,
            sliding_window=GEMMA3_SLIDING_WINDOW,
            layer_types=gemma3_layer_types(n_layers),
        )
        cls = Gemma3TextConfig
    elif family == "phi3":
        # Fused qkv_proj / gate_up_proj are Phi-3's only layout; no rope scaling (plain default RoPE).
        kw = dict(gqa, original_max_position_embeddings=MAX_POSITIONS, resid_pdrop=0.0, embd_pdrop=0.0)
        cls = Phi3Config
    elif family == "olmo2":
        kw = dict(gqa)  # post-norm blocks, q/k RMSNorm over the whole projection: the only OLMo-2 layout
        cls = Olmo2Config
    elif family == "gpt2":  # GPT-2 names its shape fields its own way
        names = {"hidden_size": "n_embd", "num_hidden_layers": "n_layer", "num_attention_heads": "n_head",
                 "intermediate_size": "n_inner", "max_position_embeddings": "n_positions"}
        kw = {names.get(k, k): v for k, v in common.items()} | dict(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
        cls = GPT2Config
    elif family == "gpt_neox":
        kw = dict(
            common,
            use_parallel_residual=True,
            rotary_pct=0.25,
            hidden_dropout=0.0,
            attention_dropout=0.0,
        )
        cls = GPTNeoXConfig
    else:
        raise ValueError(f"unknown family {family!r}; expected one of {FAMILIES}")
    kw.update(overrides)
    return cls(**kw)


def tiny_model(family: str, tokenizer, seed: int = 0, n_layers: int = 4, **overrides) -> PreTrainedModel:
    """A randomly initialised fp32 `family` model in eval mode (sdpa attention), vocab = len(tokenizer)."""
    cfg = tiny_config(family, tokenizer, n_layers=n_layers, **overrides)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa", dtype=torch.float32)
    return model.float().eval()
