"""State vectors on the tiny models: the separators read, the state's shapes and file, the edit written where the
paper writes it (and nowhere at strength 0), inner and momentum optimisation against the authors' formulas and
really moving the vector, divide-and-conquer over more examples than one prompt holds, the figure (the registry-
wide checks, every family included: test_contract.py)."""

from dataclasses import replace

import pytest
import torch
from helpers import assert_zero_shot_exactly, cancelling_at, no_hooks
from tiny import family_lm, tiny_lm

from icr_app.app.i18n import CHINESE, say
from icr_app.app.strings import strings
from icr_app.core.artefacts import ArtefactModelError
from icr_app.core.capture import head_outputs
from icr_app.core.progress import Cancelled
from icr_app.core.prompts import Template
from icr_app.core.scoring import encode, prefill
from icr_app.core.tasks import Example, builtin_task
from icr_app.core.trace import Trace
from icr_app.methods import build_method
from icr_app.methods.base import BuildError
from icr_app.methods.state_vector.figures import layer_figure, summary
from icr_app.methods.state_vector.method import StateVectorConfig, StateVectorMethod, neutral
from icr_app.methods.state_vector.reading import inner, momentum, separator_states, shown, written_state

SMALL = StateVectorConfig(n_prompts=2, val_size=4, batch_size=4)
QUERIES = builtin_task("sentiment").inputs[-3:]


@pytest.fixture(scope="module")
def lm():
    return tiny_lm()


@pytest.fixture(scope="module")
def built(lm):
    """One state vector per mode, all from the same prompts (seed 0, 4 demonstrations each)."""
    task = builtin_task("sentiment")
    return {mode: build_method(lm, task, "state-vector", replace(SMALL, mode=mode), shots=4)
            for mode in ("average", "inner", "momentum")}


def test_each_separator_is_the_last_token_before_its_answer(lm):
    demos = [Example("a fine film", "positive"), Example("dull", "negative")]
    template = Template()
    p = shown(lm, template, demos, "so so")
    decode = lm.tokenizer.decode
    assert len(p.positions) == 3 and p.positions[-1] == len(p.ids) - 1
    for pos, d in zip(p.positions, demos):
        assert decode(p.ids[: pos + 1]).endswith("Output:")
        assert decode(p.ids[pos + 1:]).startswith(" " + d.output)
    assert p.ids == lm.tokenizer(template.few_shot(demos, "so so"))["input_ids"]


def test_the_trajectory_is_each_prompts_own_states_averaged(lm):
    """Batched and left-padded reading gives, per prompt, what that prompt alone gives, and their mean."""
    template = Template()
    prompts = [shown(lm, template, [Example("great", "positive"), Example("a very bad and boring film", "negative")],
                     q) for q in ("fine", "a much longer query than the other one")]
    alone = [separator_states(lm, [p]) for p in prompts]
    together = separator_states(lm, prompts, batch_size=2)
    assert together.shape == (3, lm.n_layers, lm.n_heads * lm.head_dim)
    torch.testing.assert_close(together, (alone[0] + alone[1]) / 2, rtol=1e-5, atol=1e-6)


def test_inner_and_momentum_are_the_authors_formulas():
    """The authors' code (optimizer.py, FixOneStepOptimizer): the mean of the last 7 of the k + 1 states, plus the
    differences of successive demonstrations' states weighed 1, 2, 4, 8, 16 (the newest most), divided by 31."""
    trajectory = torch.randn(11, 3, 5, generator=torch.Generator().manual_seed(0))
    soup = trajectory[-7:].sum(0) / 7
    torch.testing.assert_close(inner(trajectory, 7), soup)
    demos = trajectory[:-1]
    step = sum(w * (demos[i] - demos[i - 1]) for w, i in zip([1, 2, 4, 8, 16], range(5, 10))) / 31
    torch.testing.assert_close(momentum(trajectory, 7, 5, 0.5, 1.0), soup + step)
    torch.testing.assert_close(momentum(trajectory[:2], 7, 5, 0.5, 1.0), inner(trajectory[:2], 7))  # one demo


def test_inner_and_momentum_move_the_vector_from_the_plain_average(built):
    plain, soup, moved = (built[m].state.vector for m in ("average", "inner", "momentum"))
    assert not torch.allclose(soup, plain) and not torch.allclose(moved, soup)
    assert float(built["average"].state.shift.abs().max()) == 0.0
    for mode in ("inner", "momentum"):  # the shift it reports is its distance from the plain average
        shift = built[mode].state.shift
        expected = (built[mode].state.vector - plain).flatten(1).norm(dim=-1) / plain.flatten(1).norm(dim=-1)
        torch.testing.assert_close(shift, expected)
        assert bool((shift > 0.01).all())


def test_the_state_has_the_models_sizes_and_its_file_refuses_another_model(lm, built, tmp_path):
    m = built["momentum"]
    s = m.state
    assert s.vector.shape == (lm.n_layers, lm.n_heads, lm.head_dim)
    assert s.layer_accuracy.shape == s.layer_gold_prob.shape == s.shift.shape == (lm.n_layers,)
    assert 1 <= s.meta.n_layers <= lm.n_layers and s.meta.n_demos == 4 and s.meta.mode == "momentum"
    assert m.stored_parameters == s.meta.n_layers * lm.n_heads * lm.head_dim
    back = StateVectorMethod.load(m.save(tmp_path / "sv.safetensors"), lm)
    assert torch.equal(back.state.vector, s.vector) and back.state.meta == s.meta
    assert [p.label_probs for p in back.predict(QUERIES)] == [p.label_probs for p in m.predict(QUERIES)]
    with pytest.raises(ArtefactModelError):
        StateVectorMethod.load(tmp_path / "sv.safetensors", tiny_lm(n_layers=2))


@pytest.mark.parametrize("family", ["llama", "gemma3", "gpt2"])  # Gemma-3: heads × head_dim is not hidden
def test_answering_writes_the_vector_at_the_last_token_of_the_first_layers_only(family):
    lm = family_lm(family)
    m = build_method(lm, builtin_task("sentiment"), "state-vector", replace(SMALL, n_layers=2), shots=3)
    prompts = [m.prompt(x) for x in QUERIES]
    targets = head_outputs(lm)
    with torch.no_grad(), lm.lock, Trace(targets, retain_input=True) as plain:
        prefill(lm, encode(lm, prompts))
        before = {layer: plain[layer].hidden_in.clone() for layer in targets}
    with torch.no_grad(), lm.lock, m.intervention(QUERIES), Trace(targets, retain_input=True) as seen:
        prefill(lm, encode(lm, prompts))  # read after the edit's own hook has run
    vector = m.state.vector.flatten(1)
    for layer in targets:
        x = seen[layer].hidden_in
        if layer < 2:
            assert torch.equal(x[:, -1], vector[layer].expand_as(x[:, -1]))
        else:
            assert not torch.equal(x[:, -1], before[layer][:, -1])  # what the edited layers wrote reached it
        torch.testing.assert_close(x[:, :-1], before[layer][:, :-1])  # every earlier position as it was
    assert no_hooks(lm)


def test_strength_zero_answers_exactly_as_zero_shot(built):
    m = built["momentum"]
    assert_zero_shot_exactly(neutral(m), QUERIES)
    assert [p.label_probs for p in m.predict(QUERIES)] != [p.label_probs for p in neutral(m).predict(QUERIES)]


def test_hooks_are_gone_after_an_error_and_the_model_is_as_it_was(lm, built):
    before = {k: v.clone() for k, v in lm.model.state_dict().items()}
    with pytest.raises(RuntimeError, match="boom"), lm.lock, built["inner"].intervention(QUERIES):
        raise RuntimeError("boom")
    with pytest.raises(Cancelled):
        build_method(lm, builtin_task("sentiment"), "state-vector", replace(SMALL, batch_size=1), shots=4,
                     progress=cancelling_at("state vector: prompts"))  # after the first prompt's pass
    assert no_hooks(lm)
    assert all(torch.equal(v, before[k]) for k, v in lm.model.state_dict().items())


def test_divide_and_conquer_aggregates_more_examples_than_one_prompt_holds(lm):
    """48 examples, 4 held out, groups of 8: 5 groups of which each prompt fits the tiny model's 512 positions,
    where the 40 examples in one prompt would not; the aggregate reads the groups' vectors written at the dummy
    demonstrations' separators, and differs from their plain mean."""
    task = builtin_task("sentiment")
    cfg = replace(SMALL, mode="divide-conquer", group_size=8, repeats=2)
    m = build_method(lm, task, "state-vector", cfg, shots=4)
    assert m.state.meta.n_groups == 5
    everything = Template().few_shot(list(task.examples[:40]), task.inputs[-1])
    assert len(lm.tokenizer(everything)["input_ids"]) > lm.model.config.max_position_embeddings
    assert bool((m.state.shift > 0.01).all())
    prompt = shown(lm, Template(), list(task.examples[:3]), task.inputs[-1])
    written = torch.randn(3, lm.n_layers, lm.n_heads * lm.head_dim, generator=torch.Generator().manual_seed(0))
    first, other = written_state(lm, prompt, written), written_state(lm, prompt, written * 2)
    torch.testing.assert_close(first[0], other[0])  # layer 0's query state sees no write below it...
    assert not torch.allclose(first[1:], other[1:])  # ...every layer above does


def test_bad_settings_are_refused_by_name(lm):
    for cfg, name in [(replace(SMALL, inner_window=0), "inner_window"), (replace(SMALL, n_layers=9), "n_layers")]:
        with pytest.raises(BuildError, match=name):
            build_method(lm, builtin_task("sentiment"), "state-vector", cfg, shots=4)


def test_the_figure_and_summary_in_both_languages(built):
    s = built["momentum"].state
    fig = layer_figure(s, say)
    assert [t.type for t in fig.data] == ["scatter", "scatter", "bar"]
    assert list(fig.data[2].y) == pytest.approx(s.shift.tolist())
    assert f"the first {s.meta.n_layers} layers edited" in summary(s, say)
    assert "(momentum optimisation)" in summary(s, say)

    def chinese(key, **values):
        return strings()[CHINESE][key].format(**values)

    words = [summary(s, chinese), layer_figure(s, chinese).data[2].name]
    assert all("动量优化" in w and "momentum" not in w for w in words), words
