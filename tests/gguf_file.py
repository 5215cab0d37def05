"""A tiny Llama written as a GGUF file, as llama.cpp's converter writes one: its byte-level BPE tokenizer, its
hyperparameters and its tensors under llama.cpp's names (q and k rows permuted as the converter permutes them),
in F32 or, with `quantize`, Q8_0 (the tensors whose width allows it), so transformers dequantises it back."""

from __future__ import annotations

import json
from pathlib import Path

import gguf
import numpy as np

from icr_app.core.models import LoadedModel

_BLOCK = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
          "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
          "mlp.down_proj": "ffn_down", "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm"}


def _permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's order of q's and k's rows (the two RoPE halves interleaved); transformers undoes it."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _tensors(lm: LoadedModel) -> dict[str, np.ndarray]:
    cfg, state = lm.model.config, {k: v.detach().float().numpy() for k, v in lm.model.state_dict().items()}
    out = {"token_embd.weight": state["model.embed_tokens.weight"], "output_norm.weight": state["model.norm.weight"]}
    for i in range(cfg.num_hidden_layers):
        for hf, name in _BLOCK.items():
            w = state[f"model.layers.{i}.{hf}.weight"]
            if name in ("attn_q", "attn_k"):
                w = _permute(w, cfg.num_attention_heads if name == "attn_q" else cfg.num_key_value_heads)
            out[f"blk.{i}.{name}.weight"] = w
    return out


def write_gguf(lm: LoadedModel, path: Path, quantize: bool = False) -> Path:
    """`lm` (a tiny Llama with tied embeddings and a byte-level BPE tokenizer) as the GGUF file `path`."""
    cfg, tok = lm.model.config, lm.tokenizer
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_rope_freq_base(cfg.rope_parameters["rope_theta"])
    w.add_vocab_size(cfg.vocab_size)
    vocab = sorted(tok.get_vocab().items(), key=lambda item: item[1])
    w.add_tokenizer_model("gpt2")
    w.add_token_list([token for token, _ in vocab])
    w.add_token_types([gguf.TokenType.CONTROL if token == tok.eos_token else gguf.TokenType.NORMAL
                       for token, _ in vocab])
    merges = json.loads(tok.backend_tokenizer.to_str())["model"]["merges"]
    w.add_token_merges([" ".join(m) if isinstance(m, list) else m for m in merges])
    w.add_eos_token_id(tok.eos_token_id)
    w.add_pad_token_id(tok.pad_token_id)
    for name, tensor in _tensors(lm).items():
        q8 = quantize and tensor.ndim == 2 and tensor.shape[1] % 32 == 0
        kind = gguf.GGMLQuantizationType.Q8_0 if q8 else gguf.GGMLQuantizationType.F32
        w.add_tensor(name, gguf.quants.quantize(tensor, kind), raw_dtype=kind if q8 else None)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
