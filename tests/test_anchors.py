"""Label words as anchors (icr_app/analyses/anchors/README.md) on the tiny random model: positions, saliency, isolation,
caches."""

import json

import pytest
import torch
from tiny import tiny_lm
from transformers.models.llama.modeling_llama import LlamaRMSNorm

from icr_app.analyses.anchors.compression import anchor_positions, compression_experiment, fixed_demo_prompts
from icr_app.analyses.anchors.confusion import confusion_experiment
from icr_app.analyses.anchors.figures import compression_figure, confusion_figure, isolation_figure
from icr_app.analyses.anchors.flow_figures import anchor_flow_figure, flow_curves_figure, flow_graph
from icr_app.analyses.anchors.isolation import isolate, isolation_experiment
from icr_app.analyses.anchors.prefix import answer_logits, demo_cache, shared_prefix
from icr_app.analyses.anchors.prompt import build_prompt, first_label_ids, label_loss
from icr_app.analyses.anchors.reweighting import reweighted
from icr_app.analyses.anchors.saliency import (
    flow_scores,
    information_flow,
    position_sets,
    prompt_saliency,
    task_prompts,
)
from icr_app.app.i18n import say
from icr_app.cli import main
from icr_app.core.attention import attend, attention_weights
from icr_app.core.prompts import Template
from icr_app.core.scoring import encode, prefill
from icr_app.core.tasks import Example, builtin_task, load_task


@pytest.fixture(scope="module")
def task():
    return builtin_task("sentiment")


@pytest.fixture(scope="module")
def prompts(lm, task):
    return task_prompts(lm, task, 4, None, 0)


def test_label_positions_multi_token_labels_and_custom_template(lm):
    template = Template(query="Review:\n{x}\nSentiment =", sep="\n---\n")
    demos = [Example("The soup was cold.", "quite bad zq"), Example("Great tacos.", "good")]
    p = build_prompt(lm, demos, Example("Nice lamp.", "good"), template)
    assert p.text == template.few_shot(demos, "Nice lamp.")
    assert len(p.label_tokens[0]) > 1
    for demo, toks in zip(demos, p.label_tokens):
        assert "".join(p.tokens[i] for i in toks).strip() == demo.output
    fmt = "".join(p.tokens[i] for i in p.format_positions)
    assert "Review" in fmt and "Sentiment" in fmt and "soup" not in fmt and "good" not in fmt
    assert "".join(p.tokens[p.prefix_len:]) == template.zero_shot("Nice lamp.")
    assert p.target == len(p.input_ids) - 1


def _rms_norm_fp64(self, x):
    return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)


def test_saliency_matches_finite_difference(monkeypatch):
    """I_l(i, j) = |Σ_h A_h ∂L/∂A_h| equals the derivative of L when every head's A(i, j) is scaled by 1+ε."""
    monkeypatch.setattr(LlamaRMSNorm, "forward", _rms_norm_fp64)  # Llama's norm rounds to fp32: keep fp64 through
    lm = tiny_lm(seed=1)
    lm.model.double()
    task = builtin_task("sentiment")
    p = task_prompts(lm, task, 1, None, 0)[0]
    flow = prompt_saliency(lm, p, task.labels)
    layer = 1
    i, j = divmod(int(flow[layer].tril(-1).argmax()), len(p))
    label_ids, gold = first_label_ids(lm, task.labels, p.template), torch.tensor([task.labels.index(p.query.output)])

    def loss_with(eps: float) -> float:
        def scaled(module, query, key, value, attention_mask, scaling=None, **_):
            w = attention_weights(query, key, attention_mask, scaling)
            if module.layer_idx == layer:
                w = w.clone()
                w[:, :, i, j] *= 1 + eps
            return attend(w, value), None

        with torch.no_grad():
            logits = lm.model(input_ids=torch.tensor([p.input_ids]), attention_edit=scaled).logits[:, -1]
        return label_loss(logits, label_ids, gold).item()

    eps = 1e-5
    fd = abs(loss_with(eps) - loss_with(-eps)) / (2 * eps)
    assert flow[layer, i, j].item() > 1e-4
    assert flow[layer, i, j].item() == pytest.approx(fd, rel=1e-6)


def test_last_layer_flow_only_reaches_the_target(lm, task, prompts):
    """Only the final row of the last layer's attention can move the final logits."""
    flow = prompt_saliency(lm, prompts[0], task.labels)
    assert flow[-1, prompts[0].target].sum() > 0
    assert flow[-1, : prompts[0].target].abs().max() == 0


def test_flow_scores_use_the_right_position_sets(prompts):
    p = prompts[0]
    n, labels = len(p), set(p.label_positions)
    sets = position_sets(p)
    flow = torch.rand(2, n, n)
    pairs = {
        "S_wp": [(a, b) for a in labels for b in range(a)],
        "S_pq": [(p.target, a) for a in labels],
    }
    pairs["S_ww"] = [(a, b) for a in range(n) for b in range(a)
                     if (a, b) not in set(pairs["S_wp"]) | set(pairs["S_pq"])]
    scores = flow_scores(flow, p)
    for name, pl in pairs.items():
        assert int(sets[name].sum()) == len(pl)
        expected = torch.stack([flow[:, a, b] for a, b in pl]).mean(0)
        torch.testing.assert_close(scores[name], expected)
    total = sets["S_wp"].int() + sets["S_pq"].int() + sets["S_ww"].int()
    assert torch.equal(total.bool(), torch.ones(n, n, dtype=torch.bool).tril(-1)) and int(total.max()) == 1


def test_isolation_k0_changes_nothing_and_padding_is_respected(lm, prompts):
    enc = encode(lm, [p.text for p in prompts])
    rows, lengths = [p.label_positions for p in prompts], [len(p) for p in prompts]
    with torch.no_grad():
        plain = prefill(lm, enc)
        same = prefill(lm, enc, intervention=isolate(rows, lengths, set()))
        cut = prefill(lm, enc, intervention=isolate(rows, lengths, {0, 1}))
        alone = prefill(lm, encode(lm, [prompts[-1].text]), intervention=isolate(rows[-1:], lengths[-1:], {0, 1}))
    torch.testing.assert_close(same, plain)
    assert (cut - plain).abs().max() > 1e-4
    torch.testing.assert_close(alone[0], cut[-1], atol=1e-4, rtol=1e-4)
    rows0 = isolation_experiment(lm, prompts, builtin_task("sentiment").labels, k=0)
    assert all(r.loyalty == 1.0 for r in rows0)


def test_full_cache_equals_full_few_shot_and_anchor_cache_keeps_anchors(lm, task):
    _, ps = fixed_demo_prompts(lm, task, 5, 4, 0, Template())
    prefix = shared_prefix(ps)
    with torch.no_grad():
        full = prefill(lm, encode(lm, [p.text for p in ps]))
        cached = answer_logits(lm, demo_cache(lm, prefix), ps)
        keep = anchor_positions(ps[0])
        anchors = demo_cache(lm, prefix, keep)
    torch.testing.assert_close(cached, full, atol=1e-4, rtol=1e-4)
    assert anchors.kept == keep and anchors.prefix_len == len(prefix)
    assert anchors.layers[0][0].shape[2] == len(keep) < len(prefix)
    assert set(ps[0].label_positions) <= set(keep)
    res = compression_experiment(lm, task, ps, batch_size=2)
    assert res.variants["full cache"].loyalty == 1.0
    assert res.variants["full cache"].accuracy == res.variants["full few-shot"].accuracy


def test_reweighting_zero_beta_is_identity_and_beta_gets_gradient(lm, task):
    _, ps = fixed_demo_prompts(lm, task, 3, None, 0, Template())
    demos = demo_cache(lm, shared_prefix(ps))
    beta = torch.zeros(lm.n_layers, lm.n_heads, len(ps[0].demos), requires_grad=True)
    with torch.no_grad():
        plain = answer_logits(lm, demos, ps)
    logits = answer_logits(lm, demos, ps, reweighted(lm, beta, ps[0].label_tokens, demos.prefix_len))
    torch.testing.assert_close(logits, plain, atol=1e-4, rtol=1e-4)
    gold = torch.zeros(len(ps), dtype=torch.long)
    label_loss(logits, first_label_ids(lm, task.labels, ps[0].template), gold).backward()
    assert beta.grad is not None and beta.grad.abs().sum() > 0


def test_confusion_and_figures(lm, task, prompts):
    res = confusion_experiment(lm, task.name, prompts, task.labels)
    assert sum(map(sum, res.confusion)) == len(prompts)
    assert all(res.predicted[i][i] == pytest.approx(1.0) for i in range(len(task.labels)))
    p = prompts[0]
    heads = prompt_saliency(lm, p, task.labels, per_head=True)
    torch.testing.assert_close(heads.sum(1).abs(), prompt_saliency(lm, p, task.labels))
    graph = flow_graph(p, heads, top=5, top_head=2)
    n_label = len(p.label_positions)
    summed = [lk for lk in graph.links if lk[0] == 1 and lk[1] == -1]
    assert len(summed) == 5 + n_label  # the 5 strongest text → label-word links, and every label word → target
    assert len([lk for lk in graph.links if lk[0] == 1 and lk[1] == 0]) == 2 + n_label
    assert max(graph.row) == len(p.demos) and graph.row[p.target] == len(p.demos)  # one line per demo, query last
    drawn = lambda fig: sum(t.mode == "lines" for t in fig.data)  # noqa: E731
    strongest = max(lk[4] for lk in summed)
    assert drawn(anchor_flow_figure(graph, say, 1, None, 0.0)) == len(summed)
    assert drawn(anchor_flow_figure(graph, say, 1, None, 0.5)) == sum(lk[4] >= 0.5 * strongest for lk in summed)
    assert [t.name for t in anchor_flow_figure(graph, say, 1, 0).data if t.mode == "text"] == [
        "target", "label word", "format", "text"]
    flow_curves_figure(information_flow(lm, task, prompts[:1]), say)
    confusion_figure(res, say)
    isolation_figure(isolation_experiment(lm, prompts, task.labels, k=1), say)
    compression_figure(compression_experiment(lm, task, fixed_demo_prompts(lm, task, 2, None, 0, Template())[1]), say)


def test_flow_cli_writes_per_layer_lists(lm, tiny_checkpoint, tmp_path):
    out = tmp_path / "flow.json"
    assert main(["flow", "--data", "sentiment", "--model", tiny_checkpoint, "--n-prompts", "2",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    for k in ("S_wp", "S_pq", "S_ww"):
        assert len(data[k]) == lm.n_layers
    assert all(sum(v) == pytest.approx(1.0) for v in zip(data["S_wp"], data["S_pq"], data["S_ww"]))


@pytest.mark.slow
@pytest.mark.needs_data("fv")
def test_real_tokenizer_positions_and_full_cache(real_lm, fv_data):
    """SmolLM2 tokenizes a trailing "\n\n" differently alone than before "Input": the cache must still match."""
    task = load_task(fv_data / "sentiment.json")
    _, ps = fixed_demo_prompts(real_lm, task, 3, None, 0, Template())
    for p in ps:
        assert sorted(p.tokens[i].strip() for i in p.label_positions) == sorted(d.output for d in p.demos)
    with torch.no_grad():
        full = prefill(real_lm, encode(real_lm, [p.text for p in ps]))
        cached = answer_logits(real_lm, demo_cache(real_lm, shared_prefix(ps)), ps)
    torch.testing.assert_close(cached, full, atol=1e-3, rtol=1e-3)
    flow = prompt_saliency(real_lm, ps[0], task.labels)
    last = flow[-1].clone()
    last[ps[0].target] = 0
    assert last.abs().max() == 0 and flow[-1, ps[0].target].sum() > 0
