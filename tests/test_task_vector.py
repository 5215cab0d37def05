"""Task vectors on the tiny models: the fast layer sweep against full-prompt patching (every family), replacing
a query's own state is zero-shot exactly, the last block carries a few-shot prompt's answer over, the chosen
layer is the one inference confirms, the figure and the tab (artefacts and hooks: test_contract.py)."""

from dataclasses import replace

import pytest
import torch
from families import FAMILIES
from helpers import TINY_TV, no_hooks, tab_show
from tiny import build_state, family_lm

from icr_app.app.i18n import say
from icr_app.core import scoring
from icr_app.core.capture import blocks, last_token_states
from icr_app.core.scoring import encode, prefill
from icr_app.core.tasks import builtin_task
from icr_app.evaluation import evaluate
from icr_app.methods.base import Answering, Method
from icr_app.methods.last_token import edit_block_output, gold_and_candidates, last_token_variants, replace_last
from icr_app.methods.state import built_fields
from icr_app.methods.task_vector import (
    TaskVectorConfig,
    TaskVectorMeta,
    TaskVectorMethod,
    TaskVectorState,
    best_layer,
    holdout,
)
from icr_app.methods.task_vector.figures import layer_figure
from icr_app.methods.zero_shot import ZeroShotMethod


def fake_tv(lm, task, layer: int, theta: torch.Tensor, accuracy: torch.Tensor | None = None) -> TaskVectorState:
    """A task vector with a chosen θ and block (and sweep numbers), without building one."""
    acc = torch.zeros(lm.n_layers) if accuracy is None else accuracy
    meta = TaskVectorMeta(task=task.name, **built_fields(lm, Answering.of(lm, task)), layer=layer, n_prompts=0,
                          n_demos=0, n_val=4, zero_shot_val_accuracy=0.25, build_s=0.0)
    return TaskVectorState(theta, acc, acc / 2, meta, lm.fingerprint)


def full_prompt_scores(lm, prompts, gold, candidates, states):
    """Reference for the sweep: each layer's patch on the whole prompt through the ordinary runner, (P, L + 1)."""
    cols = []
    for layer in [*range(lm.n_layers), None]:
        patch = None if layer is None else edit_block_output(lm, layer, lambda x, v=states[layer]: replace_last(x, v))
        with torch.no_grad():
            logits = prefill(lm, encode(lm, prompts), intervention=patch)
        logits = logits if candidates is None else logits[:, candidates]
        cols.append(logits.softmax(-1)[torch.arange(len(prompts)), gold])
    return torch.stack(cols, 1)


SWEEP_CASES = [(family, "sentiment") for family in FAMILIES] + [("llama", "antonyms"), ("gemma3", "antonyms")]


@pytest.mark.parametrize(("family", "task_name"), SWEEP_CASES)
def test_fast_sweep_equals_patching_the_full_prompt(family, task_name):
    """Cached prefix + one extra position per layer (Gemma-3: one row per layer over its 8-token window), in
    chunks smaller than the number of variants, against each patch run on the whole prompt."""
    check_fast_sweep(family, task_name)


def test_a_sweep_over_a_sliding_window_with_one_copied_cache_a_pass_is_the_same(monkeypatch):
    """Where Gemma-3's window is too short for the extra positions, each variant is a row over a copy of its
    prompt's cache; with room for one copy a pass, the hooks still patch each variant's own layer."""
    monkeypatch.setattr(scoring, "CACHE_COPY_BYTES", 1)
    check_fast_sweep("gemma3", "antonyms")


def check_fast_sweep(family: str, task_name: str) -> None:
    lm = family_lm(family)
    task = builtin_task(task_name)
    method = Method(lm, Answering.of(lm, task))
    examples = list(task.examples[:4])
    prompts = [method.prompt(e.input) for e in examples]
    gold, candidates = gold_and_candidates(lm, method, [e.output for e in examples])
    states = torch.randn(lm.n_layers, lm.model.config.hidden_size, generator=torch.Generator().manual_seed(0))

    def patch(layer, v, variants):
        return torch.where((variants == layer)[None, :, None], states[layer], v)

    fast = last_token_variants(lm, prompts, gold, candidates, lm.n_layers + 1, blocks(lm), patch, batch_size=2,
                               chunk=2)
    expected = full_prompt_scores(lm, prompts, gold, candidates, states)
    torch.testing.assert_close(fast.gold_prob, expected, atol=1e-5, rtol=1e-4)
    with torch.no_grad():
        plain = prefill(lm, encode(lm, prompts))
    assert torch.equal(fast.hit[:, -1], (plain if candidates is None else plain[:, candidates]).argmax(-1) == gold)
    assert no_hooks(lm)


@pytest.mark.parametrize("family", FAMILIES)
def test_build_shapes_on_every_family(family):
    lm = family_lm(family)
    tv = build_state(lm, builtin_task("sentiment"), "task-vector", TINY_TV, shots=2)
    assert tv.theta.shape == (lm.model.config.hidden_size,)
    assert tv.layer_accuracy.shape == tv.layer_gold_prob.shape == (lm.n_layers,)
    assert 0 <= tv.meta.layer < lm.n_layers and tv.meta.n_val == 6 and tv.meta.n_demos == 2
    assert TaskVectorMethod(lm, tv).stored_parameters == lm.model.config.hidden_size
    assert no_hooks(lm)


def test_evaluates_beside_the_baselines(lm):
    rep = evaluate(lm, builtin_task("headline-topic"), ["zero-shot", "few-shot", "task-vector"], n_test=6, shots=2,
                   configs={"task-vector": TINY_TV})
    assert not rep.failed, {k: v.error for k, v in rep.methods.items()}
    res = rep.methods["task-vector"]
    assert res.n == 6 and res.stored_parameters == lm.model.config.hidden_size and res.build_s > 0


@pytest.mark.parametrize("task_name", ["sentiment", "antonyms"])
def test_patching_the_query_own_state_is_zero_shot_exactly(lm, task_name):
    """The identity patch: each query's own last-token state after the block, written back, changes nothing."""
    task = builtin_task(task_name)
    zs = ZeroShotMethod(lm, Answering.of(lm, task))
    layer = 1
    for x in task.inputs[:3]:
        own = last_token_states(lm, [zs.prompt(x)], {layer: lm.adapter.blocks[layer]})[layer][0]
        patched = TaskVectorMethod(lm, fake_tv(lm, task, layer, own)).predict([x])[0]
        plain = zs.predict([x])[0]
        assert (patched.label_probs, patched.generated) == (plain.label_probs, plain.generated)


def test_last_block_vector_carries_the_few_shot_answer_over(lm):
    """Replaced (not added) after the LAST block, a few-shot prompt's state makes a zero-shot query answer exactly
    as that prompt does: the patch sits on the block output at the last real token."""
    task = builtin_task("sentiment")
    zs = ZeroShotMethod(lm, Answering.of(lm, task))
    queries = task.inputs[3:6]
    few = zs.template.few_shot(list(task.examples[:3]), queries[0])
    last = lm.n_layers - 1
    state = last_token_states(lm, [few], {last: lm.adapter.blocks[last]})[last][0]
    with torch.no_grad():
        expected = prefill(lm, encode(lm, [few]))[:, zs.label_set.first_ids].softmax(-1)[0]
    for p in TaskVectorMethod(lm, fake_tv(lm, task, last, state)).predict(queries, batch_size=3):  # padded rows
        torch.testing.assert_close(torch.tensor(list(p.label_probs.values())), expected, atol=1e-5, rtol=1e-5)
    below = TaskVectorMethod(lm, fake_tv(lm, task, last - 1, state)).predict(queries[:1])[0]
    assert not torch.allclose(torch.tensor(list(below.label_probs.values())), expected, atol=1e-3)


def test_chosen_layer_is_the_one_inference_confirms(lm):
    """The build's sweep numbers at its chosen block are what the ordinary runner gets on the held-out part,
    and no block scores better."""
    task = builtin_task("headline-topic")
    answering = Answering.of(lm, task)
    tv = build_state(lm, task, "task-vector", TINY_TV, answering=answering, shots=2)
    _, val = holdout(task, TINY_TV.val_size, seed=0)
    method = TaskVectorMethod(lm, tv)
    preds = method.predict([e.input for e in val], batch_size=4)
    gold_probs = [p.label_probs[e.output] for p, e in zip(preds, val)]
    accuracy = sum(p.prediction == e.output for p, e in zip(preds, val)) / len(val)
    assert accuracy == pytest.approx(float(tv.layer_accuracy[tv.meta.layer]))
    assert sum(gold_probs) / len(val) == pytest.approx(float(tv.layer_gold_prob[tv.meta.layer]), abs=1e-5)
    assert tv.meta.layer == best_layer(tv.layer_accuracy, tv.layer_gold_prob)
    fixed = build_state(lm, task, "task-vector", replace(TINY_TV, layer=0), answering=answering, shots=2)
    assert fixed.meta.layer == 0 and torch.equal(fixed.layer_accuracy, tv.layer_accuracy)


def test_best_layer_breaks_ties_by_gold_probability():
    acc = torch.tensor([0.5, 0.75, 0.75, 0.25])
    prob = torch.tensor([0.9, 0.4, 0.6, 0.95])
    assert best_layer(acc, prob) == 2
    assert best_layer(torch.zeros(3), torch.tensor([0.1, 0.3, 0.2])) == 1


def test_layer_figure_marks_the_chosen_block(lm):
    tv = fake_tv(lm, builtin_task("sentiment"), 2, torch.ones(64), accuracy=torch.tensor([0.25, 0.5, 1.0, 0.75]))
    fig = layer_figure(tv, say)
    line, star = fig.data
    assert list(line.y) == tv.layer_accuracy.tolist() and list(line.customdata) == tv.layer_gold_prob.tolist()
    assert (star.x[0], star.y[0]) == (tv.meta.layer, tv.layer_accuracy[tv.meta.layer].item())
    assert fig.layout.shapes[0].y0 == tv.meta.zero_shot_val_accuracy


def test_the_tab_offers_the_built_vector_as_a_file(lm):
    from icr_app.app.built_tab import not_built

    show = tab_show(lm, "task-vector")
    assert show({}, None) == (None, not_built("task-vector"), None)
    tv = fake_tv(lm, builtin_task("sentiment"), 2, torch.arange(64.0))
    figure, text, path = show({"task-vector": TaskVectorMethod(lm, tv)}, None)
    assert torch.equal(TaskVectorState.load(path, lm).theta, tv.theta) and "block 2" in text
    assert figure.data[1].x[0] == 2


def test_flags_reach_the_config():
    from icr_app.cli import build_parser
    from icr_app.cli.flags import method_config

    args = build_parser().parse_args(["eval", "--data", "x", "--task-vector-demos", "5", "--task-vector-layer", "3"])
    cfg = method_config(args, "task-vector")
    assert (cfg.n_demos, cfg.layer, cfg.n_prompts) == (5, 3, TaskVectorConfig().n_prompts)
