"""Function vectors on the tiny models: the fast indirect effects against patching the whole prompt, a patch with
the run's own value has no effect (every family), top-k and the projection sum by hand (biases included), the
vector is added at the last token only, the SITE overlap and the tab (a zero vector, artefacts and hooks:
test_contract.py)."""

from dataclasses import replace

import pytest
import torch
from families import FAMILIES
from helpers import TINY_FV, no_hooks, tab_show
from tiny import build_state, family_lm

from icr_app.app.i18n import say
from icr_app.core.scoring import encode, prefill
from icr_app.core.tasks import builtin_task, sample_icl_prompts
from icr_app.core.trace import Trace
from icr_app.evaluation import evaluate
from icr_app.methods.base import Answering, Method
from icr_app.methods.function_vector import (
    FunctionVectorMeta,
    FunctionVectorMethod,
    FunctionVectorState,
    default_top_k,
    indirect_effects,
    mean_head_outputs,
    project_heads,
    shuffled_label_prompts,
    site_overlap,
    top_heads,
)
from icr_app.methods.function_vector.figures import aie_figure, overlap_text
from icr_app.methods.last_token import gold_and_candidates
from icr_app.methods.state import built_fields


def fake_fv(lm, task, fv: torch.Tensor, layer: int = 1, top_k: int = 3) -> FunctionVectorState:
    """A function vector with a chosen vector and a random AIE map, without building one."""
    meta = FunctionVectorMeta(task=task.name, **built_fields(lm, Answering.of(lm, task)), layer=layer,
                              top_k=top_k, n_prompts=0, n_corrupted=0, n_demos=0, build_s=0.0)
    aie = torch.randn(lm.n_layers, lm.n_heads, generator=torch.Generator().manual_seed(3))
    return FunctionVectorState(fv, aie, meta, lm.fingerprint)


def corrupted(lm, task_name: str, n: int = 2):
    task = builtin_task(task_name)
    method = Method(lm, Answering.of(lm, task))
    prompts, golds = shuffled_label_prompts(task, method.template, n, 3, seed=0)
    return task, method, prompts, golds


def patched_gold_prob(lm, method, prompts, golds, layer: int, head: int, value: torch.Tensor) -> torch.Tensor:
    """Reference: head (layer, head)'s output at the last token set to `value` in a full-prompt pass."""
    d = lm.head_dim
    gold, candidates = gold_and_candidates(lm, method, golds)

    def put(_key, x):
        x = x.clone()
        x[:, -1, head * d:(head + 1) * d] = value
        return x

    with torch.no_grad(), lm.lock, Trace({layer: lm.adapter.head_out(layer)}, edit_input=put):
        logits = prefill(lm, encode(lm, prompts))
    logits = logits if candidates is None else logits[:, candidates]
    return logits.softmax(-1)[torch.arange(len(prompts)), gold]


@pytest.mark.parametrize("family", FAMILIES)
def test_patching_a_head_with_the_run_own_value_has_no_effect(family):
    """AIE = 0 for every head when its 'mean' output is the corrupted prompt's own (Gemma-3: the per-row path)."""
    lm = family_lm(family)
    _, method, prompts, golds = corrupted(lm, "sentiment", n=1)
    own = mean_head_outputs(lm, prompts)
    aie = indirect_effects(lm, method, prompts, golds, own)
    assert aie.shape == (lm.n_layers, lm.n_heads)
    torch.testing.assert_close(aie, torch.zeros_like(aie), atol=2e-6, rtol=0)
    shifted = indirect_effects(lm, method, prompts, golds, own + 5.0)
    assert shifted.abs().max() > 1e-4  # the same patch with another value does move the answer
    assert no_hooks(lm)


@pytest.mark.parametrize("task_name", ["sentiment", "antonyms"])
def test_indirect_effects_equal_patching_the_whole_prompt(lm, task_name):
    """Over the labels (classification) or the vocabulary (open), each head's AIE is the mean rise of the gold
    first token's probability when that head alone is patched in a full-prompt pass."""
    _, method, prompts, golds = corrupted(lm, task_name, n=3)
    means = torch.randn(lm.n_layers, lm.n_heads, lm.head_dim, generator=torch.Generator().manual_seed(1))
    aie = indirect_effects(lm, method, prompts, golds, means, batch_size=2)
    gold, candidates = gold_and_candidates(lm, method, golds)
    with torch.no_grad():
        logits = prefill(lm, encode(lm, prompts))
    base = (logits if candidates is None else logits[:, candidates]).softmax(-1)[torch.arange(3), gold]
    for layer, head in [(0, 0), (1, 3), (lm.n_layers - 1, 2)]:
        expected = (patched_gold_prob(lm, method, prompts, golds, layer, head, means[layer, head]) - base).mean()
        assert aie[layer, head].item() == pytest.approx(expected.item(), abs=1e-6)


def test_top_heads_pick_the_largest_effects_in_order():
    aie = torch.tensor([[0.1, -0.2, 0.5], [0.5, 0.0, 0.3]])
    assert top_heads(aie, 3) == [(0, 2), (1, 0), (1, 2)]  # a tie goes to the lower index
    assert top_heads(aie, 0) == []


@pytest.mark.parametrize("family", ["llama", "gpt2", "gpt_neox"])
def test_projection_sums_each_head_through_its_weight_without_bias(family):
    """W_O[:, slice h] · mean for each chosen head, summed; the output projection's bias (GPT-2, GPT-NeoX) is not
    added k times, nor once."""
    lm = family_lm(family)
    gen = torch.Generator().manual_seed(0)
    d = lm.head_dim
    for layer in range(lm.n_layers):
        proj = lm.adapter.head_out(layer)
        if getattr(proj, "bias", None) is not None:
            proj.bias.data = torch.randn(proj.bias.shape, generator=gen)  # tiny GPT-2 starts with zero biases
    means = torch.randn(lm.n_layers, lm.n_heads, d, generator=gen)
    heads = [(1, 2), (3, 0), (1, 0)]
    expected = torch.zeros(lm.model.config.hidden_size)
    for layer, head in heads:
        w = lm.adapter.head_out(layer).weight
        w = w.T if lm.adapter.family.conv1d else w  # (out, in)
        expected += w[:, head * d:(head + 1) * d] @ means[layer, head]
    torch.testing.assert_close(project_heads(lm, means, heads), expected, atol=1e-5, rtol=1e-5)
    assert torch.equal(project_heads(lm, means, []), torch.zeros_like(expected))


def test_the_vector_is_added_to_the_block_output_at_the_last_token_only(lm):
    fv = fake_fv(lm, builtin_task("sentiment"), torch.randn(64, generator=torch.Generator().manual_seed(2)))
    after = lm.adapter.blocks[fv.meta.layer + 1]  # what the rest of the model reads off the edited block
    prompts = ["Input: a long and rather dull film\nOutput:", "Input: great\nOutput:"]  # left-padded row

    def block_output(intervention=None) -> torch.Tensor:
        with torch.no_grad(), lm.lock, Trace({0: after}, retain_input=True) as trace:
            prefill(lm, encode(lm, prompts), intervention=intervention)
        return trace[0].input

    plain = block_output()
    added = block_output(FunctionVectorMethod(lm, fv).intervention(prompts))
    torch.testing.assert_close(added[:, -1] - plain[:, -1], fv.fv.expand(2, -1), atol=1e-5, rtol=1e-5)
    assert torch.equal(added[:, :-1], plain[:, :-1])


@pytest.mark.parametrize("family", FAMILIES)
def test_build_shapes_on_every_family(family):
    lm = family_lm(family)
    fv = build_state(lm, builtin_task("sentiment"), "function-vector", TINY_FV, shots=2)
    assert fv.fv.shape == (lm.model.config.hidden_size,) and fv.aie.shape == (lm.n_layers, lm.n_heads)
    assert fv.meta.layer == lm.n_layers // 3 and fv.meta.top_k == default_top_k(lm) == len(fv.heads)
    assert FunctionVectorMethod(lm, fv).stored_parameters == lm.model.config.hidden_size
    assert no_hooks(lm)


def test_build_uses_its_top_heads_and_evaluates(lm):
    task = builtin_task("headline-topic")
    cfg = replace(TINY_FV, top_k=3, layer=2)
    fv = build_state(lm, task, "function-vector", cfg, shots=2)
    assert fv.meta.top_k == 3 and fv.meta.layer == 2 and len(set(fv.heads)) == 3
    rest = top_heads(fv.aie, lm.n_layers * lm.n_heads)[3:]
    assert min(fv.aie[h] for h in fv.heads) >= max(fv.aie[h] for h in rest)
    means = mean_head_outputs(lm, sample_icl_prompts(task, Answering.of(lm, task).template, cfg.n_prompts, 2, 0))
    torch.testing.assert_close(fv.fv, project_heads(lm, means, fv.heads), atol=1e-6, rtol=1e-6)
    rep = evaluate(lm, task, ["zero-shot", "function-vector"], n_test=6, shots=2, configs={"function-vector": TINY_FV})
    assert not rep.failed, {k: v.error for k, v in rep.methods.items()}
    assert rep.methods["function-vector"].n == 6 and rep.methods["function-vector"].build_s > 0


def test_site_overlap_counts_the_shared_top_heads():
    fv_heads = [(2, 1), (0, 3), (1, 1)]
    alpha = torch.zeros(3, 4)
    alpha[2, 1], alpha[1, 0], alpha[0, 3], alpha[1, 1] = 0.9, 0.8, 0.7, 0.6  # SITE's top 3: (2,1) (1,0) (0,3)
    assert site_overlap(fv_heads, alpha) == [(0, 3), (2, 1)]
    assert site_overlap([(1, 2)], alpha) == []


def test_aie_figure_and_the_overlap_text(lm):
    fv = fake_fv(lm, builtin_task("sentiment"), torch.ones(64), top_k=3)
    fig = aie_figure(fv, say)
    heat, marks = fig.data
    assert [list(row) for row in heat.z] == fv.aie.tolist()
    assert fig.layout.yaxis.autorange == "reversed" and fig.layout.xaxis.title.text == "head"
    assert list(zip(marks.y, marks.x)) == fv.heads
    assert "build SITE" in overlap_text(fv, {}, say)

    alpha = torch.full((lm.n_layers, lm.n_heads), 0.1)
    for layer, head in fv.heads[:2]:
        alpha[layer, head] = 0.9
    alpha[next(h for h in top_heads(-fv.aie, lm.n_layers * lm.n_heads) if h not in fv.heads)] = 0.5

    class Site:  # the part of a built SITE method the tab reads: its α
        state = type("SiteState", (), {"alpha": alpha})()

    text = overlap_text(fv, {"site": Site()}, say)
    assert text.startswith("**2 of the top 3 heads**") and all(f"L{a}H{b}" in text for a, b in fv.heads[:2])


def test_the_tab_offers_the_built_vector_as_a_file(lm):
    from icr_app.app.built_tab import not_built

    show = tab_show(lm, "function-vector")
    assert show({}, None) == (None, not_built("function-vector"), "", None)
    fv = fake_fv(lm, builtin_task("sentiment"), torch.arange(64.0), top_k=2)
    figure, text, overlap, path = show({"function-vector": FunctionVectorMethod(lm, fv)}, None)
    assert torch.equal(FunctionVectorState.load(path, lm).fv, fv.fv) and "after block 1" in text
    assert "build SITE" in overlap and len(figure.data[1].x) == 2
