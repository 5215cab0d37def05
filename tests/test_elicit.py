"""ELICIT's own behaviour (the registry contract in test_contract.py covers the rest): the retriever tells the
library's domains apart, the threshold declines, the library round-trips and refuses another model, its build
reports progress and can be cancelled, its tab draws the current task at first sight, and the shipped libraries
were built from the ICR router's domains."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from helpers import (
    TINY_LIBRARY,
    built_from_two_generator_states,
    cancelling_at,
    hash_encoder,
    library_file,
    no_hooks,
    tab_show,
)
from tiny import tiny_lm

from icr_app.core.artefacts import ArtefactModelError, load_artefact
from icr_app.core.progress import Cancelled, no_progress
from icr_app.core.prompts import Template
from icr_app.core.tasks import builtin_task
from icr_app.methods import build_method
from icr_app.methods.base import BuildError
from icr_app.methods.elicit import library as library_module
from icr_app.methods.elicit import method as method_module
from icr_app.methods.elicit.library import FILE, KIND, SHIPPED, Library, LibraryConfig, build_library, train_retriever
from icr_app.methods.elicit.method import ElicitConfig
from icr_app.methods.icr.router import FILE as ROUTER_FILE
from icr_app.methods.icr.router import PRETRAINED, RouterState
from icr_app.methods.zero_shot import ZeroShotMethod

DOMAINS = ("sentiment", "antonyms")


@pytest.fixture(autouse=True)
def hashed_encoder(monkeypatch):
    monkeypatch.setattr(library_module, "minilm_encoder", lambda device: hash_encoder)


@pytest.fixture(scope="module")
def library_path(lm, tmp_path_factory) -> str:
    return library_file(lm, tmp_path_factory.mktemp("library"))


def test_the_retriever_picks_each_domains_entry_for_its_queries(lm, library_path):
    library = Library.load(library_path, lm)
    assert library.info["entries"] == list(DOMAINS)
    for own, task in enumerate(DOMAINS):
        queries = builtin_task(task).inputs
        picks = library.entry_scores(hash_encoder(queries)).argmax(-1)
        assert (picks == own).float().mean() >= 0.8, task


def test_below_the_threshold_a_query_runs_zero_shot_and_above_it_gets_the_vector(lm, library_path):
    queries = builtin_task("sentiment").inputs[:24]
    method = build_method(lm, builtin_task("sentiment"), "elicit", ElicitConfig(library=library_path, recall=0.5))
    _, scores = method.retrieve(queries)
    declined = scores < method.state.meta.threshold
    assert declined.any() and not declined.all()
    zero_shot = ZeroShotMethod(lm, method.answering).predict(queries, batch_size=4)
    elicit = method.predict(queries, batch_size=4)
    same = torch.tensor([a.label_probs == b.label_probs for a, b in zip(elicit, zero_shot)])
    assert torch.equal(same, declined)
    assert no_hooks(lm)


def test_the_recall_sets_the_threshold_from_the_held_out_scores(lm, library_path):
    library = Library.load(library_path, lm)
    assert library.threshold(1.0) == float(library.held_out.min())
    assert library.threshold(0.0) == float(library.held_out.max())
    assert library.threshold(0.8) <= library.threshold(0.5)
    with pytest.raises(ValueError, match="recall"):
        library.threshold(1.5)


def test_a_library_round_trips_and_another_models_is_refused(lm, library_path, tmp_path):
    library = Library.load(library_path, lm)
    again = Library.load(library.save(tmp_path / FILE, lm.fingerprint), lm)
    assert again.info == library.info
    assert all(torch.equal(again.library_tensors()[k], t) for k, t in library.library_tensors().items())
    assert Library.load(tmp_path, lm).info == library.info  # a folder holding the file
    with pytest.raises(ArtefactModelError):
        Library.load(library_path, tiny_lm(n_layers=2))


def test_a_model_without_a_shipped_library_is_told_how_to_build_one(lm):
    with pytest.raises(BuildError) as err:
        build_method(lm, builtin_task("sentiment"), "elicit")
    assert err.value.cause.code == "elicit.not_shipped"
    assert "icl-lab elicit build-library" in str(err.value)


def test_the_library_build_shows_progress_and_a_cancel_leaves_the_model_as_it_was(lm):
    tasks = [builtin_task(name) for name in DOMAINS]
    before = {k: v.clone() for k, v in lm.model.state_dict().items()}
    stages: list[str] = []

    def record(it, desc="", **_):
        stages.append(desc)
        return it

    build_library(lm, tasks, TINY_LIBRARY, hash_encoder, progress=record)
    assert {"ELICIT library: sentiment prompts", "ELICIT library: antonyms layer sweep",
            "ELICIT retriever epoch 1/20"} <= set(stages)
    for stage in ("ELICIT library: antonyms prompts", "ELICIT retriever epoch 2/20"):
        with pytest.raises(Cancelled):
            build_library(lm, tasks, TINY_LIBRARY, hash_encoder, progress=cancelling_at(stage, 0))
    assert no_hooks(lm)
    assert all(torch.equal(v, before[k]) for k, v in lm.model.state_dict().items())


def test_each_domain_is_built_in_its_own_prompt(lm):
    """A dataset spec brings its prompt on the task; its entry's prompts (what the retriever embeds) use it."""
    own = Template(query="Review: {x}\nSentiment:", sep="\n")
    tasks = [replace(builtin_task("sentiment"), template=own), builtin_task("antonyms")]
    embedded: list[list[str]] = []

    def encoder(texts: list[str]) -> torch.Tensor:
        embedded.append(list(texts))
        return hash_encoder(texts)

    library = build_library(lm, tasks, TINY_LIBRARY, encoder)
    sentiment, antonyms = embedded[:2]  # each entry's prompts, in order
    assert all(p.startswith("Review: ") and p.endswith("\nSentiment:") for p in sentiment)
    assert all(p.startswith("Input: ") and "Review:" not in p for p in antonyms)
    assert library.info["templates"] == [own.to_json(), Template().to_json()]


def test_a_library_needs_two_domains(lm):
    with pytest.raises(ValueError, match="two domains"):
        build_library(lm, [builtin_task("sentiment")], TINY_LIBRARY, hash_encoder)


@pytest.mark.parametrize("folder", sorted(p.parent for p in SHIPPED.glob(f"*/{FILE}")), ids=lambda p: p.name)
def test_a_shipped_library_was_built_from_the_shipped_routers_domains_for_its_model(folder):
    library = load_artefact(folder / FILE, KIND)
    router = RouterState.load(PRETRAINED / folder.name / ROUTER_FILE)
    assert library.fingerprint == router.fingerprint
    assert library.meta["domains"] == router.meta.pids["domains"]


def test_the_tab_draws_the_current_tasks_picks_at_first_sight(lm, library_path, monkeypatch):
    """No build is needed, so the tab makes the method for the current task (with the model's shipped library,
    here the small one)."""
    from icr_app.app.built_tab import not_built

    monkeypatch.setattr(method_module, "shipped_library", lambda _lm: library_path)
    monkeypatch.setattr(lm, "_memo", {})  # no library another test loaded for the session's model
    show = tab_show(lm, "elicit")
    assert show({}, None) == (None, not_built("elicit"), None)  # no task yet
    figure, text, path = show({}, None, builtin_task("antonyms"))
    assert figure.data and "**antonyms**" in text and path.endswith(".safetensors")


def test_the_retriever_is_the_same_whatever_the_global_generator():
    """Its init and dropout masks are seeded (a fresh process seeds the global generator at random), and the
    caller's generator is where it was afterwards."""
    gen = torch.Generator().manual_seed(0)
    queries, prompts = torch.randn(6, 8, generator=gen), torch.randn(4, 8, generator=gen)
    pairs = torch.tensor([(q, p, int(p == q % 4)) for q in range(6) for p in range(4)])
    cfg = LibraryConfig(epochs=2, batch_size=4, hidden=16, dropout=0.5)
    first, second = built_from_two_generator_states(lambda: train_retriever(queries, prompts, pairs, cfg, no_progress))
    assert all(torch.equal(a, b) for a, b in zip(first.state_dict().values(), second.state_dict().values()))
