"""ATV's own behaviour (the registry contract in test_contract.py covers the rest): the generator's shapes, its
training lowers the held-out loss and can be cancelled, it round-trips and refuses another model, the method adds
its vectors after every block at the last token only, strength 0 is zero-shot, a model without a generator is told
how to train one, and the shipped generator was trained on the shipped library's domains."""

from __future__ import annotations

from contextlib import nullcontext

import pytest
import torch
from helpers import TINY_ATV, cancelling_at, generator_file, hash_encoder, no_hooks
from tiny import tiny_lm

from icr_app.core.artefacts import ArtefactError, ArtefactModelError, load_artefact
from icr_app.core.progress import Cancelled
from icr_app.core.scoring import encode
from icr_app.core.tasks import builtin_task
from icr_app.core.trace import Trace, main_tensor
from icr_app.methods import build_method
from icr_app.methods.atv import generator as generator_module
from icr_app.methods.atv.generator import FILE, KIND, SHIPPED, Generator, build_generator, new_generator
from icr_app.methods.atv.method import AtvConfig, neutral
from icr_app.methods.base import BuildError
from icr_app.methods.elicit.library import FILE as LIBRARY_FILE
from icr_app.methods.elicit.library import KIND as LIBRARY_KIND
from icr_app.methods.elicit.library import SHIPPED as ELICIT_SHIPPED
from icr_app.methods.zero_shot import ZeroShotMethod

DOMAINS = ("sentiment", "antonyms")


@pytest.fixture(autouse=True)
def hashed_encoder(monkeypatch):
    monkeypatch.setattr(generator_module, "minilm_encoder", lambda device: hash_encoder)


@pytest.fixture(scope="module")
def generator_path(lm, tmp_path_factory) -> str:
    return generator_file(lm, tmp_path_factory.mktemp("generator"))


@pytest.fixture(scope="module")
def atv(lm, generator_path):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(generator_module, "minilm_encoder", lambda device: hash_encoder)
        return build_method(lm, builtin_task("sentiment"), "atv", AtvConfig(generator=generator_path), shots=2)


def test_the_generator_makes_one_vector_per_block_for_each_query(lm):
    gen = new_generator(lm, embed=32, hidden=8, seed=0)
    gen.w_out = torch.randn_like(gen.w_out)
    vectors = gen.vectors(hash_encoder(["good", "bad", "a longer query"]))
    assert vectors.shape == (lm.n_layers, 3, lm.model.config.hidden_size)
    assert not torch.allclose(vectors[:, 0], vectors[:, 1])  # each query its own
    assert torch.equal(new_generator(lm, 32, 8, 0).vectors(hash_encoder(["x"])), torch.zeros(lm.n_layers, 1, 64))
    with pytest.raises(ValueError, match="encoder it was trained with"):
        gen.vectors(torch.zeros(1, 16))


def test_training_lowers_the_held_out_loss_from_zero_shot(lm):
    cfg = type(TINY_ATV)(**{**TINY_ATV.__dict__, "steps": 20, "eval_every": 10})
    gen = build_generator(lm, [builtin_task(t) for t in DOMAINS], cfg, hash_encoder)
    losses = gen.meta.val_loss
    assert len(losses) == 3 and losses[0] == pytest.approx(sum(gen.meta.zero_shot_val_loss) / 2)
    assert min(losses[1:]) < losses[0] and gen.meta.best_step in (10, 20)
    assert gen.meta.domains == list(DOMAINS) and gen.meta.encoder == "hash_encoder"
    assert no_hooks(lm) and not any(p.grad is not None for p in lm.model.parameters())


def test_a_generator_round_trips_and_another_models_is_refused(lm, generator_path, tmp_path):
    gen = Generator.load_from(generator_path, lm)
    back = Generator.load_from(gen.save(tmp_path / FILE).parent, lm)
    assert all(torch.equal(a, b) for a, b in zip(gen.generator_tensors().values(), back.generator_tensors().values()))
    assert back.meta == gen.meta
    with pytest.raises(ArtefactModelError, match="for this model"):
        Generator.load_from(generator_path, tiny_lm(n_layers=2))


def test_strength_zero_answers_exactly_as_zero_shot_and_the_built_one_does_not(atv):
    queries = builtin_task("sentiment").inputs[:4]
    zero = [p.label_probs for p in ZeroShotMethod(atv.lm, atv.answering).predict(queries)]
    assert [p.label_probs for p in neutral(atv).predict(queries)] == zero
    assert [p.label_probs for p in atv.predict(queries)] != zero


def test_the_vectors_are_added_after_every_block_at_the_last_token_only(atv):
    lm, queries = atv.lm, ["great film", "a rather longer and duller film"]
    enc = encode(lm, [atv.prompt(q) for q in queries])
    blocks = dict(enumerate(lm.adapter.blocks))

    def outputs(change) -> dict:
        with torch.no_grad(), lm.lock, change, Trace(blocks, retain_output=True) as trace:
            lm.model(input_ids=enc.input_ids, attention_mask=enc.attention_mask)
        return {k: main_tensor(trace[k].output) for k in blocks}

    plain, changed = outputs(nullcontext()), outputs(atv.intervention(queries))
    first = changed[0] - plain[0]
    assert torch.allclose(first[:, -1], atv.vectors(queries)[0], atol=1e-5)  # block 0: exactly its vector
    assert torch.equal(first[:, :-1], torch.zeros_like(first[:, :-1]))  # earlier positions untouched
    assert all(not torch.equal(changed[k][:, -1], plain[k][:, -1]) for k in blocks)
    assert no_hooks(lm)


def test_the_hooks_are_removed_after_an_error(atv):
    with pytest.raises(RuntimeError, match="boom"), atv.lm.lock, atv.intervention(["fine"]):
        raise RuntimeError("boom")
    assert no_hooks(atv.lm)


def test_the_tab_records_each_querys_vector_norms_per_block(atv):
    from icr_app.methods.atv.figures import norms_figure, summary

    m = atv.state.meta
    assert atv.state.norms.shape == (len(m.queries), atv.lm.n_layers) and (atv.state.norms > 0).all()
    assert norms_figure(atv.state, lambda key, **kw: key).data
    assert summary(atv.state, lambda key, **kw: key) == "atv.summary.seen"  # sentiment is a training domain


def test_training_cancelled_leaves_the_model_as_it_was(lm):
    before = {k: v.clone() for k, v in lm.model.state_dict().items()}
    for stage in ("ATV domains", "ATV generator"):
        with pytest.raises(Cancelled):
            build_generator(lm, [builtin_task(t) for t in DOMAINS], TINY_ATV, hash_encoder,
                            progress=cancelling_at(stage, 1))
    assert no_hooks(lm) and all(torch.equal(v, before[k]) for k, v in lm.model.state_dict().items())


def test_a_model_without_a_shipped_generator_is_told_how_to_train_one(lm):
    with pytest.raises(BuildError) as err:
        build_method(lm, builtin_task("sentiment"), "atv", AtvConfig(), shots=2)
    assert isinstance(err.value.cause, ArtefactError) and err.value.cause.code == "atv.not_shipped"
    assert "icl-lab atv train --model tiny-llama" in str(err.value)


def test_a_generator_needs_two_domains(lm):
    with pytest.raises(ValueError, match="at least two domains"):
        build_generator(lm, [builtin_task("sentiment")], TINY_ATV, hash_encoder)


@pytest.mark.parametrize("folder", sorted(p.parent for p in SHIPPED.glob(f"*/{FILE}")), ids=lambda p: p.name)
def test_a_shipped_generator_was_trained_on_the_shipped_librarys_domains_for_its_model(folder):
    """The same domains as the model's ELICIT library (itself built from the shipped ICR router's), with a
    MANIFEST beside it."""
    generator = load_artefact(folder / FILE, KIND)
    library = load_artefact(ELICIT_SHIPPED / folder.name / LIBRARY_FILE, LIBRARY_KIND)
    assert generator.fingerprint == library.fingerprint
    assert generator.meta["domains"] == library.meta["domains"]
    assert (folder / "MANIFEST.md").is_file()
