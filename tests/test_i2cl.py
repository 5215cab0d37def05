"""I2CL on the tiny models: the injection formula at every position, the context vectors, calibration lowering its
loss, shapes on every family, the eval CLI and the tab (its identity, artefacts and hooks: test_contract.py)."""

import json
from dataclasses import replace

import pytest
import torch
from families import FAMILIES
from helpers import TINY_I2CL, no_hooks, shipped_artefacts, tab_show
from tiny import build_state, family_lm, tiny_lm

from icr_app.app.i18n import say
from icr_app.cli import main
from icr_app.core.scoring import encode, prefill
from icr_app.core.tasks import builtin_task
from icr_app.core.trace import Trace, main_tensor
from icr_app.evaluation import evaluate
from icr_app.methods import REGISTRY
from icr_app.methods.base import Answering
from icr_app.methods.i2cl.figures import coefficient_figure
from icr_app.methods.i2cl.method import (
    I2CLConfig,
    I2CLMethod,
    calibration_config,
    calibration_steps,
    coefficients,
    context_vectors,
    cosine_with_warmup,
    inject,
)


@pytest.fixture(scope="module")
def built(lm):
    """One short build per task kind, shared by the tests that only read it."""
    return {name: build_state(lm, builtin_task(name), "i2cl", TINY_I2CL) for name in ("sentiment", "antonyms")}


def test_mix_is_linear_at_every_position_of_one_layer(lm, built):
    """Coefficients that are the identity except at one layer: below it nothing changes; there each module's
    output is β·out + λ·v at every position, padding rows included, with out what the plain model computes."""
    state, layer = built["sentiment"], 2
    coef = coefficients(lm.n_layers, 0.0, 1.0)
    coef[layer, 0] = torch.tensor([0.7, 0.4])  # attention: λ, β
    prompts = ["Input: a long and rather dull film\nOutput:", "Input: great\nOutput:"]
    attn = {"a": lm.adapter.attention(layer)}
    with torch.no_grad(), lm.lock:
        with Trace(attn, retain_output=True) as plain:
            prefill(lm, encode(lm, prompts))
        with inject(lm, state.vectors, coef), Trace(attn, retain_output=True) as mixed:
            prefill(lm, encode(lm, prompts))
    a = main_tensor(plain["a"].output)
    torch.testing.assert_close(main_tensor(mixed["a"].output), 0.4 * a + 0.7 * state.vectors[layer, 0],
                               rtol=1e-6, atol=1e-6)
    assert no_hooks(lm)


def test_context_vectors_are_demo_means_at_the_separator(lm, built):
    """v is the mean over single demonstrations of each module's output at the demo text's last token."""
    state = built["sentiment"]
    assert state.vectors.shape == (lm.n_layers, 2, lm.model.config.hidden_size)
    assert state.meta.n_demos == 2 * 2  # 2 per class, 2 classes
    task = builtin_task("sentiment")
    demos = list(task.examples[:3])
    v = context_vectors(lm, demos, Answering.of(lm, task).template)
    text = Answering.of(lm, task).template.demo(demos[1])
    assert text.endswith("\n\n")
    with torch.no_grad(), lm.lock, Trace({"m": lm.adapter.mlp(1)}, retain_output=True) as tr:
        prefill(lm, encode(lm, [text]))
    alone = tr["m"].output[0, -1]
    assert not torch.allclose(v[1, 1], alone)  # a mean of three, not one of them
    vs = [context_vectors(lm, [d], Answering.of(lm, task).template) for d in demos]
    torch.testing.assert_close(vs[1][1, 1], alone, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(v, torch.stack(vs).mean(0), rtol=1e-5, atol=1e-5)


def test_calibration_lowers_its_loss(lm):
    cfg = replace(TINY_I2CL, demos_per_class=4, calibration_examples=12, epochs=8)
    for loss in ("labels", "vocabulary"):
        state = build_state(lm, builtin_task("sentiment"), "i2cl", replace(cfg, loss=loss))
        m = state.meta
        assert m.loss == loss and m.steps == 8 * 3
        assert m.calibrated_loss < m.init_loss - 1e-3, m
        assert not torch.equal(state.coef, coefficients(lm.n_layers, 0.1, 1.0))


def test_paper_preset_calibrates_on_the_demonstrations_themselves(lm):
    """i2cl@paper: the paper's 5 demonstrations per class are also its calibration prompts (2 per step)."""
    paper = REGISTRY["i2cl"].presets["paper"][1]()
    assert (paper.calibration_examples, paper.epochs, paper.batch_size, paper.loss) == (0, 100, 2, "vocabulary")
    m = build_state(lm, builtin_task("sentiment"), "i2cl", replace(paper, epochs=1)).meta
    assert m.n_demos == m.n_calibration == 2 * paper.demos_per_class and m.steps == 5 and m.loss == "vocabulary"


def test_an_open_task_calibrates_with_the_open_epochs_and_batch(lm):
    """Classification: `epochs` of `batch_size`; open: `open_epochs` of `open_batch_size` (the paper's 100 of 2)."""
    assert (I2CLConfig().open_epochs, I2CLConfig().open_batch_size) == (100, 2)
    cfg = replace(TINY_I2CL, calibration_examples=8, epochs=2, batch_size=4, open_epochs=3, open_batch_size=2)
    assert build_state(lm, builtin_task("sentiment"), "i2cl", cfg).meta.steps == 2 * (8 // 4)
    assert build_state(lm, builtin_task("antonyms"), "i2cl", cfg).meta.steps == 3 * (8 // 2)


def test_every_shipped_i2cl_was_calibrated_with_the_default_config():
    """The page's prebuilt I2CL (both built-in models, every built-in task they ship) is what a Build with
    today's defaults makes: as many calibration examples and steps as the default gives the task's kind."""
    default = I2CLConfig()
    for path, artefact in shipped_artefacts("i2cl").items():
        meta = artefact.meta
        cfg = calibration_config(default, meta["kind"])
        assert meta["n_calibration"] == cfg.calibration_examples, path
        assert meta["steps"] == calibration_steps(meta["n_calibration"], cfg), path


def test_cosine_schedule_warms_up_then_decays_to_zero():
    f = cosine_with_warmup(100)
    assert f(0) == pytest.approx(0.2) and f(4) == pytest.approx(1.0)  # 5 warmup steps
    assert f(50) < f(10) < 1.0 and f(99) < 0.01
    assert cosine_with_warmup(1)(0) == 1.0  # one step: no division by zero


def test_open_task_uses_the_vocabulary_and_progress_sees_both_loops(lm):
    seen = []

    def progress(it, desc="", **_):
        seen.append((desc, len(it)))
        return it

    state = build_state(lm, builtin_task("antonyms"), "i2cl", TINY_I2CL, progress=progress)
    assert state.meta.loss == "vocabulary" and state.meta.labels == [] and state.meta.n_demos == TINY_I2CL.open_demos
    assert seen == [("I2CL: context vectors", 1), ("I2CL: calibration", TINY_I2CL.epochs * 2)]


def test_coefficient_figure_draws_each_coefficient(built):
    state = built["sentiment"]
    fig = coefficient_figure(state, say)
    assert [t.name for t in fig.data] == ["λ attention", "λ mlp", "β attention", "β mlp"]
    assert list(fig.data[2].y) == state.coef[:, 0, 1].tolist()


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family(family):
    """Shapes on each family (parallel and normed blocks included)."""
    flm = family_lm(family)
    task = builtin_task("sentiment")
    state = build_state(flm, task, "i2cl", replace(TINY_I2CL, epochs=1))
    hidden = flm.model.config.hidden_size
    assert state.vectors.shape == (flm.n_layers, 2, hidden) and state.coef.shape == (flm.n_layers, 2, 2)
    assert torch.isfinite(state.vectors).all() and torch.isfinite(state.coef).all()


def test_evaluate_and_cli(lm, tiny_checkpoint, tmp_path):
    rep = evaluate(lm, builtin_task("headline-topic"), ["zero-shot", "i2cl"], n_test=6, shots=2,
                   configs={"i2cl": replace(TINY_I2CL, epochs=1)})
    assert not rep.failed
    r = rep.methods["i2cl"]
    assert r.n == 6 and r.trainable_parameters == lm.n_layers * 4
    assert r.stored_parameters == lm.n_layers * 4 + lm.n_layers * 2 * lm.model.config.hidden_size
    assert REGISTRY["i2cl"].kind == "implicit"
    out = tmp_path / "r.json"
    assert main(["eval", "--data", "sentiment", "--model", tiny_checkpoint, "--methods", "zero-shot,i2cl",
                 "--n-test", "4", "--i2cl-epochs", "1", "--i2cl-calibration", "4", "--json", str(out)]) == 0
    row = json.loads(out.read_text())["methods"]["i2cl"]
    assert row["error"] is None and row["n"] == 4 and row["trainable_parameters"] == lm.n_layers * 4


def test_tab_shows_the_built_i2cl_and_offers_its_file(lm, built):
    from icr_app.app.built_tab import not_built

    show = tab_show(lm, "i2cl")
    assert show({}, None) == (None, not_built("i2cl"), None)
    state = built["sentiment"]
    fig, info, path = show({"i2cl": I2CLMethod(lm, state)}, None)
    assert "sentiment" in info and f"{state.meta.steps} steps" in info
    assert list(fig.data[0].y) == state.coef[:, 0, 0].tolist()
    back = REGISTRY["i2cl"].load(path, lm)
    assert torch.equal(back.state.coef, state.coef) and torch.equal(back.state.vectors, state.vectors)
    assert back.build_s == state.meta.build_s
    # built for a model since switched
    assert show({"i2cl": I2CLMethod(tiny_lm(), state)}, None)[1] == not_built("i2cl")
