"""Scoring on the tiny model: padding invariance, full-sequence scoring, greedy decoding."""

import copy
from contextlib import contextmanager

import pytest
import torch
from tokenizers import normalizers
from transformers import DynamicCache

from icr_app.hooks import hooks
from icr_app.prompts import answer_text
from icr_app.scoring import LabelError, encode, generate, label_set, prefill, score_labels

PROMPTS = ["Input: a truly wonderful film\nOutput:", "Input: bad\nOutput:", "Input: so-so acting, fine music\nOutput:"]


def test_label_probs_are_padding_invariant(lm):
    ls = label_set(lm, ["positive", "negative"])
    assert ls.first_token_unique
    batched = score_labels(lm, PROMPTS, ls, ctx=_null())
    single = torch.cat([score_labels(lm, [p], ls, ctx=_null()) for p in PROMPTS])
    torch.testing.assert_close(batched, single, atol=1e-5, rtol=0)
    torch.testing.assert_close(batched.sum(-1), torch.ones(3))


def _full_logprob(lm, prompt, label):
    p_ids = lm.tokenizer(prompt)["input_ids"]
    l_ids = lm.tokenizer(answer_text(label), add_special_tokens=False)["input_ids"]
    ids = torch.tensor([p_ids + l_ids])
    with torch.no_grad():
        logp = torch.log_softmax(lm.model(ids).logits[0].float(), -1)
    return sum(logp[len(p_ids) - 1 + j, t].item() for j, t in enumerate(l_ids))


def test_colliding_first_tokens_use_full_sequence(lm):
    labels = ["new york", "new jersey", "boston"]
    ls = label_set(lm, labels)
    assert not ls.first_token_unique
    probs = score_labels(lm, PROMPTS, ls, ctx=_null())
    for row, prompt in zip(probs, PROMPTS):
        ref = torch.softmax(torch.tensor([_full_logprob(lm, prompt, lab) for lab in labels]), -1)
        torch.testing.assert_close(row, ref, atol=1e-4, rtol=0)


def test_labels_that_tokenise_alike_are_refused(lm):
    other = copy.copy(lm)
    other.tokenizer = copy.deepcopy(lm.tokenizer)
    other.tokenizer.backend_tokenizer.normalizer = normalizers.Lowercase()
    with pytest.raises(LabelError, match="'Yes' and 'yes' tokenise to the same tokens"):
        label_set(other, ["Yes", "yes"])


def test_greedy_generation_matches_transformers_generate(lm):
    prompt = PROMPTS[0]
    ids = lm.tokenizer(prompt, return_tensors="pt")
    ref = lm.model.generate(**ids, max_new_tokens=6, do_sample=False, pad_token_id=lm.tokenizer.pad_token_id)
    ref_ids = ref[0, ids["input_ids"].shape[1]:].tolist()
    ref_text = lm.tokenizer.decode(ref_ids, skip_special_tokens=True).split("\n")[0]
    ours = generate(lm, [prompt], 6, ctx=_null())[0]
    assert ours.first_token == ref_ids[0]
    assert ours.text == ref_text


def test_batched_generation_equals_single(lm):
    batched = generate(lm, PROMPTS, 5, ctx=_null())
    single = [generate(lm, [p], 5, ctx=_null())[0] for p in PROMPTS]
    assert [g.text for g in batched] == [g.text for g in single]


def test_intervention_is_active_during_prefill_only(lm):
    seen = []

    @contextmanager
    def count_layer0():
        with hooks(post=[(lm.layers[0], lambda m, a, o: seen.append(a[0].shape[1]))]):
            yield

    generate(lm, PROMPTS[:2], 4, ctx=count_layer0())
    enc = encode(lm, PROMPTS[:2])
    assert seen == [enc.input_ids.shape[1]]
    assert not lm.layers[0]._forward_hooks


def test_prefill_fills_cache(lm):
    enc = encode(lm, PROMPTS)
    cache = DynamicCache(config=lm.model.config)
    with torch.no_grad():
        logits = prefill(lm, enc, cache)
    assert logits.shape == (3, lm.model.config.vocab_size)
    assert cache.get_seq_length() == enc.input_ids.shape[1]


@contextmanager
def _null():
    yield
