"""Scoring on the tiny model: padding invariance, full-sequence scoring, greedy decoding."""

import copy
from contextlib import contextmanager

import pytest
import torch
from tiny import family_lm
from tokenizers import normalizers
from transformers import DynamicCache

from icr_app.core import scoring
from icr_app.core.prompts import Template
from icr_app.core.scoring import (
    LabelError,
    encode,
    generate,
    label_set,
    label_trie,
    prefill,
    score_labels,
    token_logprobs,
)
from icr_app.core.trace import Trace

PROMPTS = ["Input: a truly wonderful film\nOutput:", "Input: bad\nOutput:", "Input: so-so acting, fine music\nOutput:"]


def test_label_probs_are_padding_invariant(lm):
    ls = label_set(lm, ["positive", "negative"])
    assert ls.first_token_unique
    batched = score_labels(lm, PROMPTS, ls)
    single = torch.cat([score_labels(lm, [p], ls) for p in PROMPTS])
    torch.testing.assert_close(batched, single, atol=1e-5, rtol=0)
    torch.testing.assert_close(batched.sum(-1), torch.ones(3))


def _full_logprob(lm, prompt, label, end_id=None):
    """log p(label tokens [, end token] | prompt) from one plain forward pass of the whole sequence."""
    p_ids = lm.tokenizer(prompt)["input_ids"]
    l_ids = lm.tokenizer(Template().answer_text(label), add_special_tokens=False)["input_ids"]
    l_ids = l_ids + ([end_id] if end_id is not None else [])
    ids = torch.tensor([p_ids + l_ids])
    with torch.no_grad():
        logp = torch.log_softmax(lm.model(ids).logits[0].float(), -1)
    return sum(logp[len(p_ids) - 1 + j, t].item() for j, t in enumerate(l_ids))


@pytest.mark.parametrize("labels", [["new york", "new jersey", "boston"],
                                    ["new york", "new york city", "boston", "boston red sox", "paris"],
                                    ["1", "10", "11", "12", "2"]])
@pytest.mark.parametrize("template", [None, Template()])  # no end token; the separator's
def test_colliding_first_tokens_use_full_sequence(lm, labels, template):
    """Shared prefixes and labels that are prefixes of others ("1" of "10"): the trie's one pass equals each
    label scored alone, its end token included, so a short label is "it and stop", not a lower bound."""
    ls = label_set(lm, labels, template)
    assert not ls.first_token_unique
    probs = score_labels(lm, PROMPTS, ls)
    ends = ls.end_ids or [None] * len(labels)
    for row, prompt in zip(probs, PROMPTS):
        ref = torch.softmax(torch.tensor([_full_logprob(lm, prompt, lab, e) for lab, e in zip(labels, ends)]), -1)
        torch.testing.assert_close(row, ref, atol=1e-4, rtol=0)


def test_token_logprobs_in_chunks_equal_the_full_log_softmax_and_its_gradient(lm):
    """Chunked (and, under autograd, checkpointed) log-probs equal a log-softmax over all logits at once, in value,
    greedy flag and gradient; per-row tokens too."""
    hidden = torch.randn(3, 7, lm.model.config.hidden_size, requires_grad=True)
    positions = torch.tensor([0, 2, 2, 5, 6, 1, 3, 4])
    tokens = torch.randint(0, lm.model.config.vocab_size, (3, 8))
    tokens[1, 3] = lm.adapter.logits(hidden[1, 5]).argmax()  # one greedy hit to find
    lp, hit = token_logprobs(lm, hidden, positions, tokens, chunk=3)
    full = torch.log_softmax(lm.adapter.logits(hidden), -1)[:, positions]
    want = full.gather(-1, tokens[..., None])[..., 0]
    torch.testing.assert_close(lp, want, atol=1e-5, rtol=0)
    assert torch.equal(hit, full.argmax(-1) == tokens) and hit[1, 3]
    weights = torch.randn(3, 8)
    (grad,) = torch.autograd.grad((lp * weights).sum(), hidden)
    (want_grad,) = torch.autograd.grad((want * weights).sum(), hidden)
    torch.testing.assert_close(grad, want_grad, atol=1e-5, rtol=0)
    same, _ = token_logprobs(lm, hidden.detach(), positions, tokens[0], chunk=16)  # one row of tokens for all
    torch.testing.assert_close(same[0], lp[0].detach(), atol=1e-5, rtol=0)


def test_the_trie_shares_prefixes():
    trie = label_trie(((5, 6, 7, 1), (5, 6, 8, 1), (5, 1), (9, 1)))
    assert len(trie.tokens) == 5  # (5) (5 6) (5 6 7) (5 6 8) (9), and nothing twice; (5) serves three labels
    assert trie.tokens.count(5) == 1 and trie.step_label.tolist().count(0) == 3


def test_sliding_window_models_score_long_prompts_per_label():
    """Gemma-3's sliding layers keep 7 keys: a prompt longer than that goes the per-label way, and both ways
    equal each label scored alone."""
    gemma = family_lm("gemma3")
    labels = ["new york", "new york city", "boston"]
    ls = label_set(gemma, labels, Template())
    for prompt in ("Input: x\nOutput:", "Input: a rather long sentence that is longer than the window\nOutput:"):
        probs = score_labels(gemma, [prompt], ls)[0]
        ref = torch.softmax(torch.tensor([_full_logprob(gemma, prompt, lab, e) for lab, e in zip(labels, ls.end_ids)]),
                            -1)
        torch.testing.assert_close(probs, ref, atol=1e-4, rtol=0)


def test_per_label_scoring_copies_a_bounded_cache_and_gives_the_same_scores(monkeypatch):
    """The per-label way repeats the prompts' cache once per label; with room for one copy a pass, the labels run
    one by one (a pass of one row per prompt) and score what they score all at once."""
    gemma = family_lm("gemma3")
    labels = ["new york", "new york city", "new jersey", "boston"]
    ls = label_set(gemma, labels, Template())
    prompts = ["Input: a rather long sentence that is longer than the window\nOutput:", "Input: short one\nOutput:"]
    whole = score_labels(gemma, prompts, ls)
    monkeypatch.setattr(scoring, "CACHE_COPY_BYTES", 1)
    passes = []
    hook = gemma.adapter.body.register_forward_pre_hook(
        lambda module, args, kwargs: passes.append(len(kwargs["input_ids"])), with_kwargs=True)
    try:
        split = score_labels(gemma, prompts, ls)
    finally:
        hook.remove()
    assert passes == [2] + [2] * len(labels)  # the prompts, then each label over its own copy of their cache
    torch.testing.assert_close(split, whole, atol=1e-6, rtol=0)


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
    ours = generate(lm, [prompt], 6)[0]
    assert ours.first_token == ref_ids[0]
    assert ours.text == ref_text


def test_batched_generation_equals_single(lm):
    batched = generate(lm, PROMPTS, 5)
    single = [generate(lm, [p], 5)[0] for p in PROMPTS]
    assert [g.text for g in batched] == [g.text for g in single]


def test_intervention_is_active_during_prefill_only(lm):
    seen = []

    @contextmanager
    def count_layer0():
        with Trace({0: lm.layers[0]}, edit_input=lambda k, x: seen.append(x.shape[1]) or x):
            yield {}

    generate(lm, PROMPTS[:2], 4, count_layer0())
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

