"""ICV on the tiny models: the injection keeps every position's norm and turns it towards the direction, the
principal direction and its sign, the λ sweep, every family, the eval CLI and the tab (λ = 0, artefacts and
hooks: test_contract.py)."""

import json
from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F
from families import FAMILIES
from helpers import TINY_ICV, no_hooks, tab_show
from tiny import build_state, family_lm

from icr_app.app.i18n import say
from icr_app.cli import main
from icr_app.core.prompts import Template
from icr_app.core.scoring import encode, prefill
from icr_app.core.tasks import builtin_task
from icr_app.core.trace import Trace, main_tensor
from icr_app.evaluation import evaluate
from icr_app.methods import REGISTRY
from icr_app.methods.icv.figures import sweep_figure
from icr_app.methods.icv.method import (
    ICVMethod,
    ICVState,
    _holdout,
    inject,
    latent_shifts,
    principal_directions,
    steer,
    steered_modules,
    validation_score,
)
from icr_app.methods.zero_shot import ZeroShotMethod


def at(state: ICVState, strength: float) -> ICVState:
    return ICVState(state.directions, replace(state.meta, strength=strength), state.fingerprint)


@pytest.fixture(scope="module")
def built(lm):
    return {name: build_state(lm, builtin_task(name), "icv", TINY_ICV) for name in ("sentiment", "antonyms")}


@pytest.mark.parametrize("site", ["block", "mlp"])
def test_injection_keeps_each_norm_and_turns_towards_the_direction(lm, built, site):
    """At every steered module and every position (padding included) the output's norm is what the module
    computed, and its cosine with the layer's direction went up."""
    state = built["sentiment"]
    modules = steered_modules(lm, site)
    prompts = ["Input: a long and rather dull film\nOutput:", "Input: great\nOutput:"]
    with torch.no_grad(), lm.lock, Trace(modules, retain_output=True) as raw:
        with inject(lm, state.directions, 0.3, site), Trace(modules, retain_output=True) as steered:
            prefill(lm, encode(lm, prompts))
    for layer in modules:
        before, after = main_tensor(raw[layer].output), main_tensor(steered[layer].output)
        assert before.shape == after.shape == (2, encode(lm, prompts).input_ids.shape[1], lm.model.config.hidden_size)
        torch.testing.assert_close(after.norm(dim=-1), before.norm(dim=-1), rtol=1e-5, atol=1e-6)
        v, real = state.directions[layer], before.norm(dim=-1) > 0  # a zero state stays zero
        assert real.sum() >= 20
        assert (F.cosine_similarity(after, v.expand_as(after), dim=-1)
                > F.cosine_similarity(before, v.expand_as(before), dim=-1))[real].all()
    assert no_hooks(lm)


def test_steer_formula():
    """The reference's ICVLayer: normalize(normalize(h) + λ·(1 + max(0, cos(h, −v)))·v)·‖h‖."""
    h = torch.tensor([[3.0, 4.0], [-4.0, 3.0]])
    v = torch.tensor([1.0, 0.0])
    out = steer(h, v, 0.5)
    torch.testing.assert_close(out[0], F.normalize(torch.tensor([0.6 + 0.5, 0.8]), dim=0) * 5)  # cos(h, −v) < 0
    torch.testing.assert_close(out[1], F.normalize(torch.tensor([-0.8 + 0.5 * 1.8, 0.6]), dim=0) * 5)  # = 0.8


def test_principal_direction_and_its_sign():
    """Shifts = a mean + spread along u: PC1 is ±u, turned towards the mean; pc1+mean is their normalised sum."""
    gen = torch.Generator().manual_seed(0)
    d = 16
    u = F.normalize(torch.randn(d, generator=gen), dim=0)
    w = torch.randn(d, generator=gen)
    mean = 0.5 * u + 0.2 * F.normalize(w - (w @ u) * u, dim=0)  # along +u, plus a part orthogonal to it
    coeff = torch.randn(20, 1, generator=gen) * 5
    coeff -= coeff.mean()
    shifts = (mean + coeff * u + torch.randn(20, d, generator=gen) * 0.01)[:, None, :].repeat(1, 3, 1)
    shifts[:, 1] *= -1  # a layer whose mean points the other way: the sign must follow the mean
    pc1 = principal_directions(shifts, "pc1")
    assert pc1.shape == (3, d) and torch.allclose(pc1.norm(dim=-1), torch.ones(3))
    assert float(pc1[0] @ u) > 0.99 and float(pc1[1] @ u) < -0.99
    assert (pc1 * shifts.mean(0)).sum(-1).gt(0).all()
    for seed in range(8):  # the SVD's own sign is arbitrary: about half of these would point away from the mean
        gen.manual_seed(seed)
        noisy = torch.randn(12, 4, d, generator=gen) * torch.linspace(3, 0.5, d) + torch.randn(4, d, generator=gen)
        assert ((principal_directions(noisy) * noisy.mean(0)).sum(-1) > 0).all()
    with_mean = principal_directions(shifts, "pc1+mean")
    torch.testing.assert_close(with_mean[0], F.normalize(pc1[0] + shifts[:, 0].mean(0), dim=0), rtol=1e-4,
                               atol=1e-5)
    with pytest.raises(ValueError, match="at least 2"):
        principal_directions(shifts[:1])


def test_latent_shifts_are_answered_minus_query(lm):
    task = builtin_task("sentiment")
    demos = list(task.examples[:3])
    shifts = latent_shifts(lm, demos, Template())
    assert shifts.shape == (3, lm.n_layers, lm.model.config.hidden_size)
    q = f"Input: {demos[2].input}\nOutput:"
    with torch.no_grad(), lm.lock, Trace({"b": lm.adapter.blocks[1]}, retain_output=True) as tr:
        prefill(lm, encode(lm, [q, q + " " + demos[2].output]))
    h = main_tensor(tr["b"].output)[:, -1]
    torch.testing.assert_close(shifts[2, 1], h[1] - h[0], rtol=1e-5, atol=1e-5)


def test_sweep_scores_each_strength_and_picks_the_best(lm, built):
    """The sweep's λ = 0 row is zero-shot's validation score; each row is that λ's real score; the best wins."""
    state, task = built["sentiment"], builtin_task("sentiment")
    _, val = _holdout(task, TINY_ICV, 0)
    m = state.meta
    assert [r["strength"] for r in m.sweep] == TINY_ICV.strengths and m.n_val == TINY_ICV.val_examples
    for row in m.sweep:
        assert (row["accuracy"], row["tiebreak"]) == validation_score(ICVMethod(lm, at(state, row["strength"])), val)
    best = max(m.sweep, key=lambda r: (r["accuracy"], r["tiebreak"], -r["strength"]))
    assert m.strength == best["strength"]
    zs = ZeroShotMethod(lm, m.to_answering()).predict(val.inputs)
    assert m.sweep[0]["accuracy"] == sum(p.prediction == y for p, y in zip(zs, val.outputs)) / len(val.examples)
    fig = sweep_figure(state, say)
    assert list(fig.data[0].x) == TINY_ICV.strengths and list(fig.data[1].x) == [m.strength]


def test_validation_is_held_out_from_the_demonstrations(lm):
    task = builtin_task("sentiment")
    pool, val = _holdout(task, TINY_ICV, 0)
    assert len(val.examples) == TINY_ICV.val_examples and not set(pool.inputs) & set(val.inputs)
    assert len(pool.examples) + len(val.examples) == len(task.examples)
    small = task.subset([0, 1])
    with pytest.raises(ValueError, match="at least 3"):
        build_state(lm, small, "icv", TINY_ICV)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family(family):
    """Shapes on each family; both sites keep the norm there too."""
    flm = family_lm(family)
    task = builtin_task("sentiment")
    state = build_state(flm, task, "icv", replace(TINY_ICV, strengths=[0.0, 0.2]))
    assert state.directions.shape == (flm.n_layers, flm.model.config.hidden_size)
    torch.testing.assert_close(state.directions.norm(dim=-1), torch.ones(flm.n_layers))
    enc = encode(flm, task.inputs[:4])
    for site in ("block", "mlp"):
        modules = steered_modules(flm, site)
        with torch.no_grad(), flm.lock, Trace(modules, retain_output=True) as raw:
            with inject(flm, state.directions, 0.2, site), Trace(modules, retain_output=True) as steered:
                prefill(flm, enc)
        for layer in modules:
            torch.testing.assert_close(main_tensor(steered[layer].output).norm(dim=-1),
                                       main_tensor(raw[layer].output).norm(dim=-1), rtol=1e-5, atol=1e-5)
    assert no_hooks(flm)


def test_evaluate_and_cli(lm, tiny_checkpoint, tmp_path):
    rep = evaluate(lm, builtin_task("antonyms"), ["zero-shot", "icv"], n_test=6, shots=2,
                   configs={"icv": replace(TINY_ICV, strengths=[0.0, 0.05])})
    assert not rep.failed
    r = rep.methods["icv"]
    assert r.n == 6 and r.trainable_parameters == 0
    assert r.stored_parameters == lm.n_layers * lm.model.config.hidden_size + 1
    assert REGISTRY["icv"].kind == "implicit"
    out = tmp_path / "r.json"
    assert main(["eval", "--data", "sentiment", "--model", tiny_checkpoint, "--methods", "zero-shot,icv",
                 "--n-test", "4", "--icv-strengths", "0,0.1", "--icv-site", "mlp", "--json", str(out)]) == 0
    row = json.loads(out.read_text())["methods"]["icv"]
    assert row["error"] is None and row["n"] == 4


def test_tab_shows_the_built_icv_and_offers_its_file(lm, built):
    from icr_app.app.built_tab import not_built

    show = tab_show(lm, "icv")
    assert show({}, None) == (None, not_built("icv"), None)
    state = built["sentiment"]
    fig, info, path = show({"icv": ICVMethod(lm, state)}, None)
    assert f"λ = {state.meta.strength:g}" in info
    assert list(fig.data[0].y) == [r["accuracy"] for r in state.meta.sweep]
    back = REGISTRY["icv"].load(path, lm)
    assert torch.equal(back.state.directions, state.directions) and back.state.meta == state.meta
