"""Every supported decoder family through every method and analysis, on a tiny random model of each.

The checks are identities and real behaviour, not smoke: the cached-prefix training path equals the full prompt
(Gemma-3's 8-token sliding window included); saliency equals a finite difference; the rank-1 patch reproduces the
block output; the adapter's pre-RoPE q/k, once rotated, are what attention sees. Every method's neutral setting,
artefacts and hooks on every family: test_contract.py.
"""

from __future__ import annotations

from contextlib import nullcontext

import pytest
import torch
from families import FAMILIES, tiny_model
from helpers import TINY_SITE, hash_encoder, no_hooks
from tiny import family_lm, tiny_tokenizer
from transformers import BloomConfig, BloomForCausalLM

from icr_app.analyses.anchors.compression import compression_experiment, fixed_demo_prompts
from icr_app.analyses.anchors.confusion import confusion_experiment
from icr_app.analyses.anchors.isolation import isolation_experiment
from icr_app.analyses.anchors.prefix import answer_logits, demo_cache, shared_prefix
from icr_app.analyses.anchors.prompt import first_label_ids, label_loss
from icr_app.analyses.anchors.reweighting import reweighted
from icr_app.analyses.anchors.saliency import prompt_saliency, task_prompts
from icr_app.analyses.rank1.analysis import rank1_analysis
from icr_app.core import scoring
from icr_app.core.adapter import UnsupportedModelError
from icr_app.core.attention import attend, attention_weights
from icr_app.core.models import wrap
from icr_app.core.prefix import PrefixPool
from icr_app.core.prompts import Template
from icr_app.core.scoring import encode, prefill
from icr_app.core.tasks import builtin_task
from icr_app.evaluation import evaluate
from icr_app.methods.base import Answering
from icr_app.methods.icr.pids import extract_pids
from icr_app.methods.icr.router import new_router


@pytest.fixture(scope="module", params=FAMILIES)
def flm(request):
    return family_lm(request.param)


@pytest.fixture(scope="module")
def sentiment():
    return builtin_task("sentiment")


def test_adapter_finds_every_part(flm):
    """Shapes from the adapter match what the model computes; pre-RoPE q/k have the widths attention splits."""
    ad = flm.adapter
    seen: dict[str, tuple] = {}

    def record(module, query, key, value, attention_mask, **kw):
        seen.setdefault("q", query.shape)
        seen.setdefault("k", key.shape)
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(module, query, key, value, attention_mask, **kw)

    enc = encode(flm, ["Input: a good day\nOutput:"])
    with flm.lock, ad.pre_rope_qk([0]) as qk:
        prefill(flm, enc, intervention=nullcontext({"attention_edit": record}))
        q, k = qk[0]
    _, h, t, d = seen["q"]
    assert (h, d) == (flm.n_heads, flm.head_dim) and seen["k"][1] == flm.n_kv_heads
    assert q.shape == (1, t, flm.n_heads * flm.head_dim) and k.shape == (1, t, flm.n_kv_heads * flm.head_dim)
    assert {p.name for p in ad.projections} in ({"gate", "up"}, {"fc"})
    for p in ad.projections:
        assert p.matrix(ad.blocks[0]).shape[1] == flm.model.config.hidden_size
    assert no_hooks(flm)


def test_adapter_logits_are_the_models_own(flm):
    """The body's hidden states through `Adapter.logits` give the model's logits, Gemma-3's final soft-cap included
    (its real configs leave it off, so the test switches it on)."""
    enc = encode(flm, ["Input: a good day\nOutput:", "Input: no\nOutput:"])
    inputs = dict(input_ids=enc.input_ids, attention_mask=enc.attention_mask, position_ids=enc.position_ids)
    cfg = flm.model.config
    caps = [None, 0.5] if cfg.model_type == "gemma3_text" else [None]
    try:
        for cap in caps:
            cfg.final_logit_softcapping = cap
            with torch.no_grad():
                want = flm.model(**inputs).logits
                got = flm.adapter.logits(flm.adapter.body(**inputs).last_hidden_state)
            torch.testing.assert_close(got, want, atol=1e-5, rtol=0)
    finally:
        if cfg.model_type == "gemma3_text":
            cfg.final_logit_softcapping = None


def test_site_cached_prefix_equals_the_full_prompt(flm):
    """Longer than Gemma-3's 8-token window: the prefix pool must keep what the sliding layers see."""
    prompts = ["Input: happy\nOutput:", "Input: a much longer input sentence than the window here\nOutput:"]
    with torch.no_grad():
        full = prefill(flm, encode(flm, prompts))
        cached = PrefixPool(flm, prompts).last_logits(torch.arange(2))
    torch.testing.assert_close(cached, full, atol=1e-4, rtol=1e-4)


def test_a_pass_over_repeated_rows_copies_a_bounded_cache_and_gives_the_same_logits(flm, monkeypatch):
    """A function vector runs each prompt once per variant over a copy of its cached prefix; the copies of one
    pass stay within CACHE_COPY_BYTES (here two rows' worth), and splitting the rows changes no logit."""
    prompts = ["Input: happy\nOutput:", "Input: a much longer input sentence than the window here\nOutput:"]
    pool = PrefixPool(flm, prompts)
    rows = torch.arange(2).repeat_interleave(5)  # 5 variants of each prompt
    with torch.no_grad():
        whole = pool.last_logits(rows)
        m = int(pool.prefix_len.max())
        monkeypatch.setattr(scoring, "CACHE_COPY_BYTES", 2 * m * sum(2 * k[0].numel() // k.shape[2] * k.element_size()
                                                                   for k in pool.keys))
        passes = []
        hook = flm.adapter.body.register_forward_pre_hook(
            lambda module, args, kwargs: passes.append(len(kwargs["input_ids"])), with_kwargs=True)
        try:
            split = pool.last_logits(rows)
            with torch.enable_grad():  # under autograd the copies are kept for the backward whichever way: one pass
                pool.last_logits(rows)
        finally:
            hook.remove()
    assert passes == [2] * 5 + [10]
    torch.testing.assert_close(split, whole, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("family", ["gpt2", "gpt_neox"])
def test_a_stray_kv_head_count_in_the_config_is_ignored_where_the_family_has_no_grouped_heads(family, sentiment):
    """Configs saved by other tools can carry `num_key_value_heads`; GPT-2 and GPT-NeoX never group their heads."""
    tok = tiny_tokenizer()
    lm = wrap(tiny_model(family, tok, num_key_value_heads=2), tok, f"tiny-{family}-stray-kv")
    assert lm.model.config.num_key_value_heads == 2
    assert lm.n_kv_heads == lm.n_heads == 4
    rep = evaluate(lm, sentiment, ["site"], n_test=4, shots=2, configs={"site": TINY_SITE})
    assert not rep.failed, rep.methods["site"].error


def test_site_and_baselines_evaluate(flm, sentiment):
    rep = evaluate(flm, sentiment, ["zero-shot", "few-shot", "site"], n_test=6, shots=2, configs={"site": TINY_SITE})
    assert not rep.failed, {k: v.error for k, v in rep.methods.items()}
    assert all(r.n == 6 for r in rep.methods.values())


def test_icr_pids_fit_the_family_and_a_router_routes(flm, sentiment):
    pids = extract_pids(flm, [sentiment], rank=2, n_prompts=3, max_demos=2)
    assert pids.u_q.shape == (flm.n_layers, flm.n_heads * flm.head_dim, 2)
    assert pids.u_k.shape == (flm.n_layers, flm.n_kv_heads * flm.head_dim, 2)
    layers = [flm.n_layers - 2, flm.n_layers - 1]
    answering = Answering.of(flm, sentiment)
    queries = sentiment.inputs[:4]
    moved = new_router(flm, pids, 32, layers=layers, encoder=hash_encoder)
    torch.nn.init.normal_(moved.net.alpha_mlp[-1].weight, std=20.0, generator=torch.Generator().manual_seed(0))
    enc = encode(flm, [answering.template.zero_shot(x) for x in queries])
    with torch.no_grad():
        routed = prefill(flm, enc, intervention=moved.intervention(queries))
        base = prefill(flm, enc)
    assert (routed - base).abs().max() > 1e-4
    assert no_hooks(flm)


def test_saliency_matches_a_finite_difference(flm, sentiment):
    """I_l(i, j) = |Σ_h A_h ∂L/∂A_h| is the derivative of L when every head's A(i, j) is scaled by 1 + ε."""
    p = task_prompts(flm, sentiment, 1, None, 0)[0]
    flow = prompt_saliency(flm, p, sentiment.labels)
    layer = 1
    i, j = divmod(int(flow[layer].tril(-1).argmax()), len(p))
    label_ids = first_label_ids(flm, sentiment.labels, p.template)
    gold = torch.tensor([sentiment.labels.index(p.query.output)])

    def loss_with(eps: float) -> float:
        def scaled(module, query, key, value, attention_mask, scaling=None, **_):
            w = attention_weights(query.double(), key.double(), attention_mask, scaling)
            if module.layer_idx == layer:
                w = w.clone()
                w[:, :, i, j] *= 1 + eps
            return attend(w, value.double()).to(query.dtype), None

        with torch.no_grad():
            logits = flm.model(input_ids=torch.tensor([p.input_ids]), attention_edit=scaled).logits[:, -1]
        return label_loss(logits.double(), label_ids, gold).item()

    eps = 1e-2
    fd = abs(loss_with(eps) - loss_with(-eps)) / (2 * eps)
    assert flow[layer, i, j].item() > 1e-4
    assert flow[layer, i, j].item() == pytest.approx(fd, rel=2e-2)


def test_rank1_identity(flm, sentiment):
    rep = rank1_analysis(flm, sentiment, shots=2, n_transfer=1)
    assert max(rep.max_abs_error) <= 1e-5
    # Until a full-attention layer mixes them in, the demonstrations lie outside a sliding window: no gap there.
    reached = [any(flm.adapter.sliding_window(k) is None for k in range(layer + 1)) for layer in rep.layers]
    assert any(reached)
    for err, gap, seen in zip(rep.max_abs_error, rep.unpatched_error, reached):
        if seen:
            assert gap > 100 * max(err, 1e-12)
    # GPT-NeoX's parallel block reads its MLP input off the block input, which at layer 0 is the last token's
    # embedding alone: there the context cannot move it and ΔW is exactly 0 (Δh carries the attention's move).
    sigmas = [s for rows in rep.sigma.values() for s in rows]
    assert sum(s[0] > 0 for s in sigmas) >= len(sigmas) - len(rep.sigma)
    assert all(s[1] / s[0] < 1e-4 for s in sigmas if s[0] > 0)
    assert no_hooks(flm)


def test_anchor_analyses(flm, sentiment):
    prompts = task_prompts(flm, sentiment, 3, None, 0)
    rows = isolation_experiment(flm, prompts, sentiment.labels, k=1)
    assert rows[0].loyalty == 1.0 and len(rows) == 5
    _, ps = fixed_demo_prompts(flm, sentiment, 3, 2, 0, Template())
    demos = demo_cache(flm, shared_prefix(ps))
    with torch.no_grad():
        full = prefill(flm, encode(flm, [p.text for p in ps]))
        torch.testing.assert_close(answer_logits(flm, demos, ps), full, atol=1e-4, rtol=1e-4)
        beta = torch.zeros(flm.n_layers, flm.n_heads, len(ps[0].demos))
        same = answer_logits(flm, demos, ps, reweighted(flm, beta, ps[0].label_tokens, demos.prefix_len))
        torch.testing.assert_close(same, full, atol=1e-4, rtol=1e-4)  # re-weighting by exp(0) changes nothing
    if any(flm.adapter.sliding_window(layer) for layer in range(flm.n_layers)):
        with pytest.raises(ValueError, match="sliding-window layers"):
            compression_experiment(flm, sentiment, ps, batch_size=2)
    else:
        comp = compression_experiment(flm, sentiment, ps, batch_size=2)
        assert comp.variants["full cache"].loyalty == 1.0  # the demonstrations' cache is the full prompt
    conf = confusion_experiment(flm, sentiment.name, prompts, sentiment.labels)
    assert sum(map(sum, conf.confusion)) == len(prompts)
    assert no_hooks(flm)


def test_an_unknown_family_names_the_supported_ones():
    tok = tiny_tokenizer()
    bloom = BloomForCausalLM(BloomConfig(vocab_size=len(tok), hidden_size=32, n_layer=1, n_head=2))
    with pytest.raises(UnsupportedModelError, match="Llama, Mistral, Qwen2, Qwen3, Gemma-3, OLMo-2, Phi-3, GPT-2"):
        wrap(bloom, tok, "bloom")
