"""Iterative vectors on the tiny models: the update schedule, the answer positions, the state's shapes on every
family, the iteration feeding the vectors back (and doing nothing at extraction strength 0), the edit at the last
token, strength 0 as zero-shot, the artefact, hooks and the model left as found (test_contract.py checks the same
for every method; here on this method's own settings)."""

from dataclasses import replace

import pytest
import torch
from families import FAMILIES
from helpers import assert_zero_shot_exactly, no_hooks, tab_show
from tiny import build_state, family_lm, tiny_lm

from icr_app.core.artefacts import ArtefactModelError
from icr_app.core.scoring import encode, prefill
from icr_app.core.tasks import builtin_task
from icr_app.core.trace import Trace, main_tensor
from icr_app.methods.base import Answering
from icr_app.methods.iterative_vector.method import (
    IterativeVectorConfig,
    IterativeVectorMethod,
    extract,
    neutral,
    sample_episodes,
    update_groups,
)

SMALL = IterativeVectorConfig(episodes=9, update_every=4, extraction_strength=0.5)
QUERIES = ["a warm and funny film", "dull", "I want my two hours back."]


@pytest.fixture(scope="module")
def built(sharp_lm):
    return {name: IterativeVectorMethod(sharp_lm, build_state(sharp_lm, builtin_task(name), "iterative-vector", SMALL))
            for name in ("sentiment", "antonyms")}


def test_updates_follow_the_reference_schedule():
    """The first episode alone, then `every` at a time, the last group cut short; 0 = one update at the end."""
    assert [list(g) for g in update_groups(9, 4)] == [[0], [1, 2, 3, 4], [5, 6, 7, 8]]
    assert [len(g) for g in update_groups(25, 10)] == [1, 10, 10, 4]
    assert [list(g) for g in update_groups(3, 0)] == [[0, 1, 2]]


def test_answer_positions_are_the_tokens_before_each_answer(sharp_lm):
    """Each demonstration's position is followed in the prompt by its answer's first token; the query's is last."""
    task = builtin_task("sentiment")
    answering = Answering.of(sharp_lm, task)
    for ep in sample_episodes(sharp_lm, task, answering, replace(SMALL, demos_per_class=2), seed=1):
        ids = sharp_lm.tokenizer(ep.prompt)["input_ids"]
        assert len(ep.positions) == 5 and ep.positions[-1] == len(ids) - 1 and ep.rows[-1] == 2
        for p, row in zip(ep.positions[:-1], ep.rows[:-1]):
            answer = sharp_lm.tokenizer(answering.template.answer_text(answering.labels[row]),
                                        add_special_tokens=False)["input_ids"]
            assert ids[p + 1: p + 1 + len(answer)] == answer


def test_state_shapes_rows_and_updates(sharp_lm, built):
    d = sharp_lm.model.config.hidden_size
    for name, rows in (("sentiment", ["negative", "positive", "query"]), ("antonyms", ["demo", "query"])):
        state = built[name].state
        assert state.meta.rows == rows
        assert state.vectors.shape == (sharp_lm.n_layers, len(rows), d)
        assert state.norms.shape == (3, sharp_lm.n_layers, len(rows))
        torch.testing.assert_close(state.norms[-1], state.vectors.norm(dim=-1))
        assert state.vectors.abs().sum() > 0 and built[name].stored_parameters == state.query_vectors.numel()


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_builds_and_answers(family):
    lm = family_lm(family)
    state = build_state(lm, builtin_task("sentiment"), "iterative-vector", replace(SMALL, episodes=3))
    assert state.vectors.shape == (lm.n_layers, 3, lm.model.config.hidden_size)
    assert len(IterativeVectorMethod(lm, state).predict(QUERIES[:2])) == 2
    assert no_hooks(lm)


def test_iteration_feeds_the_vectors_back(sharp_lm):
    """With the running vectors added inside the extraction prompts, the vectors differ from the plain mean of the
    same episodes' differences; at extraction strength 0 iterating is the plain mean (a no-op update would make the
    first case equal too)."""
    task = builtin_task("sentiment")
    episodes = sample_episodes(sharp_lm, task, Answering.of(sharp_lm, task), SMALL, seed=0)
    plain, _ = extract(sharp_lm, episodes, 3, replace(SMALL, update_every=0))
    iterated, norms = extract(sharp_lm, episodes, 3, SMALL)
    still, _ = extract(sharp_lm, episodes, 3, replace(SMALL, extraction_strength=0.0))
    torch.testing.assert_close(still, plain, rtol=1e-5, atol=1e-6)
    assert (iterated - plain).norm() > 1e-3 * plain.norm()
    assert not torch.equal(norms[0], norms[-1])


def test_answering_adds_the_query_vector_to_every_attention_output_at_the_last_token(sharp_lm, built):
    """What each layer's attention returns (read by a trace hooked before the method's) against what the layer
    above receives from it: strength·v[l, query] added at every row's last token, nothing elsewhere."""
    method = built["sentiment"]
    method = IterativeVectorMethod(sharp_lm, replace(method.state, meta=replace(method.state.meta, strength=0.5)))
    targets = {layer: sharp_lm.adapter.attention(layer) for layer in range(sharp_lm.n_layers)}
    with torch.no_grad(), sharp_lm.lock, Trace(targets, retain_output=True) as plain:
        with method.intervention(QUERIES), Trace(targets, retain_output=True) as edited:
            prefill(sharp_lm, encode(sharp_lm, [method.prompt(q) for q in QUERIES]))
    for layer in targets:
        a, b = main_tensor(plain[layer].output), main_tensor(edited[layer].output)
        assert torch.equal(b[:, :-1], a[:, :-1])
        torch.testing.assert_close(b[:, -1] - a[:, -1], 0.5 * method.state.query_vectors[layer].expand(3, -1),
                                   rtol=1e-5, atol=1e-6)
    assert no_hooks(sharp_lm)


def test_strength_zero_is_zero_shot_and_strength_one_is_not(built):
    for method in built.values():
        assert_zero_shot_exactly(neutral(method), QUERIES)
    method = built["sentiment"]
    assert [p.label_probs for p in method.predict(QUERIES)] != [p.label_probs for p in neutral(method).predict(QUERIES)]


def test_artefact_round_trip_and_other_models_refused(sharp_lm, built, tmp_path):
    method = built["sentiment"]
    path = method.save(tmp_path / "iv.safetensors")
    back = IterativeVectorMethod.load(path, sharp_lm)
    assert torch.equal(back.state.vectors, method.state.vectors) and torch.equal(back.state.norms, method.state.norms)
    assert back.state.meta == method.state.meta
    assert [p.label_probs for p in back.predict(QUERIES)] == [p.label_probs for p in method.predict(QUERIES)]
    with pytest.raises(ArtefactModelError):
        IterativeVectorMethod.load(path, tiny_lm(n_layers=2))


def test_hooks_removed_after_an_error_and_model_unchanged(sharp_lm, built):
    before = {k: v.clone() for k, v in sharp_lm.model.state_dict().items()}
    build_state(sharp_lm, builtin_task("sentiment"), "iterative-vector", replace(SMALL, episodes=2))
    built["antonyms"].predict(["hot"])
    with pytest.raises(RuntimeError, match="boom"), sharp_lm.lock, built["sentiment"].intervention(QUERIES):
        raise RuntimeError("boom")
    assert no_hooks(sharp_lm)
    after = sharp_lm.model.state_dict()
    assert after.keys() == before.keys() and all(torch.equal(after[k], v) for k, v in before.items())


def test_bad_settings_are_refused(sharp_lm):
    with pytest.raises(ValueError, match="at least"):
        build_state(sharp_lm, builtin_task("sentiment"), "iterative-vector", replace(SMALL, episodes=0))


def test_figure_and_tab_in_both_languages(sharp_lm, built):
    """The tab shows the built vectors' norm figure and summary (the heatmap is the query row's norms per update)
    and offers the file; in Chinese the figure's and the summary's words are the folder's zh-CN ones."""
    from icr_app.app.built_tab import not_built
    from icr_app.app.i18n import CHINESE, say, strings
    from icr_app.methods.iterative_vector.figures import norm_figure, summary

    method = built["sentiment"]
    state = method.state
    fig = norm_figure(state, say)
    assert [list(row) for row in fig.data[0].z] == state.norms[:, :, -1].tolist()
    assert [t.name for t in fig.data[1:]] == ["negative", "positive", "query"]

    def zh(key: str, **values: object) -> str:
        return strings()[CHINESE][key].format(**values)

    show = tab_show(sharp_lm, "iterative-vector")
    assert show({}, None) == (None, not_built("iterative-vector"), None)
    fig, info, path = show({"iterative-vector": method}, None)
    assert "sentiment" in info and f"{state.meta.episodes} episodes" in info
    back = IterativeVectorMethod.load(path, sharp_lm)
    assert torch.equal(back.state.vectors, state.vectors)
    assert summary(state, say) in info and "迭代向量" in summary(state, zh)
    assert norm_figure(state, zh).layout.title.text.startswith("sentiment 的迭代向量")
