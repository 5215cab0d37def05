"""The contract every registered method keeps, checked for each entry of the method registry, so a method
registered later is checked without a test of its own:

- at its neutral setting (strength 0, the spec's `neutral`) it answers exactly as zero-shot, on every family;
- its artefact (the spec's `artefact` and `load`) answers as the method it was saved from, and an artefact made
  for another model is refused with the artefact error; a method without one refuses to save;
- an error raised inside its intervention, or a build cancelled half-way, leaves no hook, no attention change and
  the model as it was (parameters, requires_grad, train/eval mode);
- building it and answering with it leave the model as they found it.

Methods are built from `helpers.tiny_configs` where it names them, else from their defaults; ICR from a routing
router saved for each model, ELICIT from a small library built for it, ATV from a small generator trained for it.
Method-specific behaviour stays in each method's own test module.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from families import FAMILIES
from helpers import (
    cancelling_at,
    generator_file,
    library_file,
    no_hooks,
    stand_in_encoders,
    tiny_configs,
    trained_like,
)
from tiny import family_lm, tiny_lm

from icr_app.core.artefacts import ArtefactModelError
from icr_app.core.progress import Cancelled
from icr_app.core.scoring import encode, prefill
from icr_app.core.tasks import builtin_task
from icr_app.methods import REGISTRY, build_method
from icr_app.methods.icr.pids import extract_pids
from icr_app.methods.state import StatefulMethod
from icr_app.methods.zero_shot import ZeroShotMethod

METHODS = list(REGISTRY)
WITH_NEUTRAL = [name for name, spec in REGISTRY.items() if spec.neutral is not None]
SAVING = [name for name, spec in REGISTRY.items() if spec.artefact is not None]
TINY = "tiny"  # the session's tiny Llama-style model (grouped KV heads)
MODELS = [TINY, *FAMILIES]
PROBE = ["Input: fine\nOutput:", "Input: a rather longer probe sentence\nOutput:"]


def answers(method, queries: list[str]) -> list[tuple]:
    return [(p.prompt, p.generated, p.label_probs) for p in method.predict(queries, batch_size=3)]


def forward(lm, prompts: list[str]) -> torch.Tensor:
    """The caller's own call of the model, as `Method.applied` changes it."""
    enc = encode(lm, prompts)
    return lm.model(input_ids=enc.input_ids, attention_mask=enc.attention_mask).logits


def model_state(lm) -> dict:
    """What an intervention or a build must leave as it found it."""
    model = lm.model
    return {"tensors": {k: v.detach().clone() for k, v in model.state_dict().items()},
            "requires_grad": {k: p.requires_grad for k, p in model.named_parameters()},
            "modules": {k: (type(m), m.training) for k, m in model.named_modules()},  # no layer wrapped or added
            "attributes": set(vars(model)),
            "attention": model.config._attn_implementation}


def assert_same_model(lm, before: dict) -> None:
    after = model_state(lm)
    assert no_hooks(lm)
    assert after["attention"] == before["attention"] and after["attributes"] == before["attributes"]
    assert after["modules"] == before["modules"] and after["requires_grad"] == before["requires_grad"]
    assert after["tensors"].keys() == before["tensors"].keys()
    assert all(torch.equal(after["tensors"][k], v) for k, v in before["tensors"].items())


class Built:
    """Each (model, method, task) built once for the module, on its model's tiny configs."""

    def __init__(self, lm, folder: Path) -> None:
        self.models, self.configs, self.methods, self.folder = {TINY: lm}, {}, {}, folder

    def model(self, name: str):
        if name not in self.models:
            self.models[name] = family_lm(name)
        return self.models[name]

    def config(self, model: str, method: str):
        if model not in self.configs:
            lm, folder = self.model(model), self.folder / model
            self.configs[model] = tiny_configs(routing_folder(lm, folder), library_file(lm, folder),
                                               generator_file(lm, folder))
        return self.configs[model].get(method)

    def __call__(self, model: str, method: str, task: str = "sentiment"):
        key = (model, method, task)
        if key not in self.methods:
            config = self.config(model, method)
            self.methods[key] = build_method(self.model(model), builtin_task(task), method, config, shots=2)
        return self.methods[key]


def routing_folder(lm, folder: Path) -> str:
    """A router for `lm` whose α is not zero (so ICR's neutral setting means something), saved to `folder`."""
    pids = extract_pids(lm, [builtin_task("sentiment")], rank=2, n_prompts=3, max_demos=2)
    trained_like(lm, pids, seed=0).save(folder)
    return str(folder)


@pytest.fixture(scope="module")
def built(lm, tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:  # routers, libraries and generators from a file embed with the stand-in
        stand_in_encoders(mp)
        yield Built(lm, tmp_path_factory.mktemp("routers"))


@pytest.fixture(scope="module")
def other_lm():
    """A model of another architecture (two layers), which no artefact built on the tiny model fits."""
    return tiny_lm(n_layers=2)


def queries_of(task: str) -> list[str]:
    return builtin_task(task).inputs[-4:]


NEUTRAL_CASES = [(model, task) for model in MODELS for task in ("sentiment", "antonyms")]  # antonyms: open answers


@pytest.mark.parametrize("method", WITH_NEUTRAL)
@pytest.mark.parametrize(("model", "task"), NEUTRAL_CASES)
def test_the_neutral_setting_answers_exactly_as_zero_shot(built, method, model, task):
    neutral = REGISTRY[method].neutral
    m = built(model, method, task)
    queries = queries_of(task)
    zero_shot = answers(ZeroShotMethod(m.lm, m.answering), queries)
    assert answers(neutral(m), queries) == zero_shot
    if (model, task) == (TINY, "sentiment"):  # and the check means something: as built, the method does change them
        assert [a[2] for a in answers(m, queries)] != [a[2] for a in zero_shot]
    assert no_hooks(m.lm)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("task", ["sentiment", "antonyms"])
def test_the_artefact_round_trip_answers_the_same(built, method, task, tmp_path):
    spec, m = REGISTRY[method], built(TINY, method, task)
    if spec.artefact is None:
        with pytest.raises(TypeError, match="no built state"):
            m.save(tmp_path / "m.safetensors")
        return
    back = spec.load(m.save(tmp_path / "m.safetensors"), m.lm)
    assert type(back) is type(m)
    assert answers(back, queries_of(task)) == answers(m, queries_of(task))
    if isinstance(m, StatefulMethod):  # bit for bit, and it says how it was built
        saved, loaded = m.state.stored_tensors(), back.state.stored_tensors()
        assert saved.keys() == loaded.keys() and all(torch.equal(saved[k], loaded[k]) for k in saved)
        assert back.state.meta == m.state.meta


@pytest.mark.parametrize("method", SAVING)
def test_an_artefact_made_for_another_model_is_refused(built, other_lm, method, tmp_path):
    spec = REGISTRY[method]
    m = built(TINY, method)
    path = m.save(tmp_path / "m.safetensors")
    with pytest.raises(ArtefactModelError):
        spec.load(path, other_lm)
    if isinstance(m, StatefulMethod):  # nor does a state read without a model answer on another one
        with pytest.raises(ArtefactModelError, match="for this model"):
            type(m)(other_lm, m.STATE.load(path))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("model", MODELS)
def test_an_error_inside_the_intervention_leaves_the_model_as_it_was(built, method, model):
    m = built(model, method)
    lm = m.lm
    before, plain = model_state(lm), prefill(lm, encode(lm, PROBE))
    queries = queries_of("sentiment")[:2]

    def boom(*_):
        raise RuntimeError("boom")

    last = lm.layers[-1].register_forward_hook(boom)  # raises in the middle of the changed forward pass
    try:
        with pytest.raises(RuntimeError, match="boom"), torch.no_grad(), m.applied(queries):
            forward(lm, [m.prompt(x) for x in queries])
    finally:
        last.remove()
    with pytest.raises(RuntimeError, match="boom"), lm.lock, m.intervention(queries):
        boom()
    assert_same_model(lm, before)
    assert torch.equal(prefill(lm, encode(lm, PROBE)), plain)


@pytest.mark.parametrize("method", METHODS)
def test_a_build_and_its_answers_leave_the_model_as_it_was(lm, built, method):
    config = built.config(TINY, method)  # ICR's router is made before the snapshot
    before = model_state(lm)
    m = build_method(lm, builtin_task("antonyms"), method, config, shots=2)
    m.predict(queries_of("antonyms"), batch_size=3)
    with torch.no_grad(), m.applied(queries_of("antonyms")[:1]):
        forward(lm, PROBE[:1])
    assert_same_model(lm, before)


def build_loops(lm, method: str, config) -> dict[str, int]:
    """The loops the build runs through its progress, in order: their `desc` and steps."""
    steps: dict[str, int] = {}

    def record(it, desc="", **_):
        for i, x in enumerate(it):
            steps[desc] = max(steps.get(desc, 0), i + 1)
            yield x

    build_method(lm, builtin_task("sentiment"), method, config, shots=2, progress=record)
    return steps


@pytest.mark.parametrize("method", METHODS)
def test_a_build_cancelled_in_any_loop_leaves_the_model_as_it_was(lm, built, method):
    """The app cancels a build by raising `Cancelled` inside its progress: here in each of the build's loops in
    turn, at its second step (a loop of one step: at its first)."""
    config = built.config(TINY, method)  # ICR's router is made before the snapshot
    before = model_state(lm)
    for stage, steps in build_loops(lm, method, config).items():
        with pytest.raises(Cancelled):
            build_method(lm, builtin_task("sentiment"), method, config, shots=2,
                         progress=cancelling_at(stage, min(1, steps - 1)))
        assert_same_model(lm, before)
    assert_same_model(lm, before)
