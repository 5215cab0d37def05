"""A tiny randomly initialised Llama-style model with a byte-level BPE tokenizer, built in ~1 s.

Used by the fast tests: real transformers code paths (GQA, RoPE, KV cache) at toy size, no download.
"""

from __future__ import annotations

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from icr_app.demo_tasks import DEMO_TASKS
from icr_app.models import LoadedModel, wrap

TOKENIZER_TASKS = ("sentiment", "headline-topic", "antonyms", "country-capital", "past-tense", "emotion")


def tiny_tokenizer() -> PreTrainedTokenizerFast:
    # A fixed corpus, so adding a built-in task does not change the tiny model every test was tuned on.
    corpus = [f"Input: {x}\nOutput: {y}\n\n" for name in TOKENIZER_TASKS for x, y in DEMO_TASKS[name]]
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<eos>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", pad_token="<eos>")


def tiny_lm(seed: int = 0, n_layers: int = 4, n_heads: int = 4, n_kv_heads: int = 2) -> LoadedModel:
    tok = tiny_tokenizer()
    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=n_layers,
        num_attention_heads=n_heads, num_key_value_heads=n_kv_heads, max_position_embeddings=512,
        eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(cfg).float()
    return wrap("tiny-llama", model, tok)
