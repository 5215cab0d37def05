"""Tiny randomly initialised models with a byte-level BPE tokenizer, built in well under a second.

Used by the fast tests: real transformers code paths (GQA, RoPE, KV cache, fused projections, sliding windows)
at toy size, no download. `tiny_lm()` is the Llama-style model most tests use; `family_lm(name)` builds any
supported family (`families.py`).
"""

from __future__ import annotations

import json

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from icr_app.core.models import LoadedModel, owned, wrap
from icr_app.core.tasks import BUILTIN_DIR

TOKENIZER_TASKS = ("sentiment", "headline-topic", "antonyms", "country-capital", "past-tense", "emotion")


def tiny_tokenizer() -> PreTrainedTokenizerFast:
    # A fixed corpus, so adding a built-in task does not change the tiny model every test was tuned on.
    rows = [r for name in TOKENIZER_TASKS for r in json.loads((BUILTIN_DIR / f"{name}.json").read_text())]
    corpus = [f"Input: {r['input']}\nOutput: {r['output']}\n\n" for r in rows]
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<eos>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", pad_token="<eos>")


def tiny_lm(seed: int = 0, n_layers: int = 4, n_heads: int = 4, n_kv_heads: int = 2,
            tok: PreTrainedTokenizerFast | None = None) -> LoadedModel:
    """The tiny Llama-style model; `tok`: another tokenizer than `tiny_tokenizer()` (e.g. one given a chat
    template), its vocabulary sizing the model."""
    tok = tok or tiny_tokenizer()
    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=n_layers,
        num_attention_heads=n_heads, num_key_value_heads=n_kv_heads, max_position_embeddings=512,
        eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(cfg).float()
    return wrap(owned(model), tok, "tiny-llama")


def family_lm(family: str, seed: int = 0, n_layers: int = 4) -> LoadedModel:
    from families import tiny_model

    tok = tiny_tokenizer()
    return wrap(owned(tiny_model(family, tok, seed=seed, n_layers=n_layers)), tok, f"tiny-{family}")


def build_state(lm: LoadedModel, task, name: str, config, **context):
    """What method `name` learns from `task` (its built state), built the one way every caller builds it
    (`methods.build_method`), raising what the method's builder raised."""
    from icr_app.methods import build_method
    from icr_app.methods.base import BuildError

    try:
        return build_method(lm, task, name, config, **context).state
    except BuildError as err:
        raise err.cause from None
