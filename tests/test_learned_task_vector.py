"""Learned task vectors on the tiny model: training lowers the answer loss (labels and open answers), the sweep
keeps the block that scores best on the held-out examples and that block's own vector, the strength scales what is
added, the artefact keeps block, vector and strength, the figure, the tab and the flags (strength 0 is zero-shot,
artefacts, hooks, bf16 and every family: test_contract.py and test_precision.py)."""

from dataclasses import replace

import pytest
import torch
from helpers import TINY_LTV, shipped_artefacts, tab_show
from tiny import build_state

from icr_app.app.i18n import say
from icr_app.core.capture import blocks, last_token_states
from icr_app.core.scoring import encode, no_intervention
from icr_app.core.tasks import builtin_names, builtin_task
from icr_app.core.trace import Trace, main_tensor
from icr_app.methods import build_method
from icr_app.methods.answer_loss import held_out, prompt_examples, scorer_for
from icr_app.methods.base import Answering, BuildError, Method
from icr_app.methods.learned_task_vector.artefact import LearnedTaskVectorState
from icr_app.methods.learned_task_vector.figures import sweep_figure
from icr_app.methods.learned_task_vector.method import (
    LearnedTaskVectorConfig,
    LearnedTaskVectorMethod,
    added,
    holdout,
    sweep_blocks,
    train_vector,
)


@pytest.mark.parametrize("task_name", ["sentiment", "antonyms"])  # the label set; an open task's answer tokens
def test_training_lowers_the_answer_loss(lm, task_name):
    """On a random model the input tells little, so the classification examples share one label: what one
    vector can surely learn there is that label."""
    task = builtin_task(task_name)
    base = Method(lm, Answering.of(lm, task))
    examples = [e for e in task.examples if task.kind == "open" or e.output == task.labels[0]][:16]
    fit = prompt_examples(lm, base, examples)
    scorer = scorer_for(lm, base, "answer")
    before, _ = held_out(scorer, fit, no_intervention, 8)
    grads = [p.requires_grad for p in lm.model.parameters()]
    v = train_vector(scorer, fit, 1, LearnedTaskVectorConfig(steps=30, lr=0.05), seed=0)
    after, _ = held_out(scorer, fit, lambda: added(lm, 1, v, position=0), 8)
    assert after < before - 0.1, (before, after)
    assert [p.requires_grad for p in lm.model.parameters()] == grads


def test_the_sweep_keeps_the_best_held_out_block_and_its_own_vector(lm):
    state = build_state(lm, builtin_task("sentiment"), "learned-task-vector", replace(TINY_LTV, sweep=-1))
    assert state.layers == list(range(lm.n_layers))
    acc, loss = state.val_accuracy, state.val_loss
    best = max(state.layers, key=lambda layer: (float(acc[layer]), -float(loss[layer])))
    assert state.meta.layer == best
    assert float(state.vector.norm()) == pytest.approx(float(state.vector_norm[best]))
    alone = build_state(lm, builtin_task("sentiment"), "learned-task-vector", replace(TINY_LTV, layer=best, sweep=0))
    assert alone.layers == [best] and torch.equal(alone.vector, state.vector)
    assert (state.residual_norm > 0).all() and (state.vector_norm > 0).all()


def test_the_blocks_trained_at():
    """Every block by default (the paper's sweep); a third of the depth with `sweep` 0; a given `layer` alone."""
    assert sweep_blocks(30, LearnedTaskVectorConfig()) == list(range(30))
    one = LearnedTaskVectorConfig(sweep=0)
    assert sweep_blocks(30, one) == [10] and sweep_blocks(18, one) == [6]
    assert sweep_blocks(30, LearnedTaskVectorConfig(layer=7)) == [7]
    assert sweep_blocks(30, LearnedTaskVectorConfig(layer=7, sweep=3)) == [7]
    assert sweep_blocks(30, LearnedTaskVectorConfig(sweep=4)) == [6, 12, 18, 24]
    assert sweep_blocks(4, LearnedTaskVectorConfig(sweep=4)) == sweep_blocks(4, LearnedTaskVectorConfig(sweep=-1)) \
        == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="not a block"):
        sweep_blocks(4, LearnedTaskVectorConfig(layer=4))


def test_every_shipped_vector_was_trained_with_the_default_config():
    """The page's prebuilt vectors (both built-in models, every built-in task) are what a Build with today's
    defaults makes: the default sweep's blocks, steps and learning rate (read from the files alone)."""
    default, shipped = LearnedTaskVectorConfig(), shipped_artefacts("learned-task-vector")
    assert {path.parent.name for path in shipped} == set(builtin_names())  # Gemma ships every built-in task
    for path, artefact in shipped.items():
        tried, meta = artefact.tensors["tried"], artefact.meta
        assert tried.nonzero().flatten().tolist() == sweep_blocks(len(tried), default), path
        assert (meta["steps"], meta["lr"]) == (default.steps, default.lr), path


def test_a_block_beyond_the_model_or_too_few_examples_is_refused(lm):
    beyond = replace(TINY_LTV, layer=lm.n_layers, sweep=0)
    with pytest.raises(BuildError, match="not a block"):
        build_method(lm, builtin_task("sentiment"), "learned-task-vector", beyond)
    one = replace(builtin_task("sentiment"), examples=builtin_task("sentiment").examples[:1])
    with pytest.raises(BuildError, match="at least 2 training examples"):
        build_method(lm, one, "learned-task-vector", TINY_LTV)


def test_the_strength_scales_what_is_added_at_the_last_token(lm):
    state = build_state(lm, builtin_task("sentiment"), "learned-task-vector", TINY_LTV)
    block = {state.meta.layer: blocks(lm)[state.meta.layer]}
    prompts = ["Input: fine\nOutput:", "Input: a rather longer probe\nOutput:"]

    def block_output(strength: float) -> torch.Tensor:
        method = LearnedTaskVectorMethod(lm, replace(state, meta=replace(state.meta, strength=strength)))
        enc = encode(lm, prompts)
        with torch.no_grad(), lm.lock, method.intervention([]), Trace(block, retain_output=True) as trace:
            lm.model(input_ids=enc.input_ids, attention_mask=enc.attention_mask)
        return main_tensor(trace[state.meta.layer].output)

    plain, once, twice = block_output(0.0), block_output(1.0), block_output(2.0)
    torch.testing.assert_close(once[:, :-1], plain[:, :-1])  # earlier positions untouched
    torch.testing.assert_close(once[:, -1] - plain[:, -1], state.vector.expand(2, -1), atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(twice[:, -1] - plain[:, -1], 2 * state.vector.expand(2, -1), atol=1e-5, rtol=1e-4)


def test_the_artefact_keeps_block_vector_strength_and_sweep(lm, tmp_path):
    state = build_state(lm, builtin_task("antonyms"), "learned-task-vector", replace(TINY_LTV, strength=0.5))
    back = LearnedTaskVectorState.load(state.save(tmp_path / "ltv.safetensors"), lm)
    assert (back.meta.layer, back.meta.strength, back.layers) == (state.meta.layer, 0.5, state.layers)
    assert torch.equal(back.vector, state.vector) and torch.equal(back.val_loss, state.val_loss)
    assert LearnedTaskVectorMethod(lm, back).vector.equal(0.5 * state.vector)


def test_residual_norms_are_the_held_out_prompts_mean_last_token_norm(lm):
    task = builtin_task("sentiment")
    state = build_state(lm, task, "learned-task-vector", TINY_LTV)
    _, val = holdout(task, TINY_LTV, seed=0)
    prompts = [Method(lm, Answering.of(lm, task)).prompt(e.input) for e in val]
    for layer in state.layers:
        norms = last_token_states(lm, prompts, {layer: blocks(lm)[layer]})[layer].norm(dim=-1)
        assert float(state.residual_norm[layer]) == pytest.approx(float(norms.mean()), rel=1e-5)
    assert state.meta.n_val == len(val) and state.meta.n_prompts == TINY_LTV.max_examples - len(val)


def test_the_figure_marks_the_chosen_block_and_draws_both_norms(lm):
    state = build_state(lm, builtin_task("sentiment"), "learned-task-vector", replace(TINY_LTV, sweep=-1))
    fig = sweep_figure(state, say)
    line, star, vector, residual = fig.data
    assert list(line.x) == state.layers and list(line.y) == state.val_accuracy.tolist()
    assert (star.x[0], star.y[0]) == (state.meta.layer, state.val_accuracy[state.meta.layer].item())
    assert list(vector.y) == state.vector_norm.tolist() and list(residual.y) == state.residual_norm.tolist()
    assert fig.layout.shapes[0].y0 == state.meta.zero_shot_val_accuracy


def test_the_tab_offers_the_built_vector_as_a_file(lm):
    from icr_app.app.built_tab import not_built

    show = tab_show(lm, "learned-task-vector")
    assert show({}, None) == (None, not_built("learned-task-vector"), None)
    state = build_state(lm, builtin_task("sentiment"), "learned-task-vector", TINY_LTV)
    figure, text, path = show({"learned-task-vector": LearnedTaskVectorMethod(lm, state)}, None)
    assert torch.equal(LearnedTaskVectorState.load(path, lm).vector, state.vector)
    assert f"block {state.meta.layer}" in text and figure.data[1].x[0] == state.meta.layer


def test_flags_and_the_paper_preset_reach_the_config():
    from icr_app.cli import build_parser
    from icr_app.cli.flags import method_config

    args = build_parser().parse_args(["eval", "--data", "x", "--learned-task-vector-layer", "3",
                                      "--learned-task-vector-strength", "0.5"])
    cfg = method_config(args, "learned-task-vector")
    assert (cfg.layer, cfg.strength, cfg.steps) == (3, 0.5, LearnedTaskVectorConfig().steps)
    assert method_config(args, "learned-task-vector@paper").sweep == -1
