"""The public Python API (`icr_app`): wrap leaves the user's model as it was, build / predict / save / load /
applied on it, the registries, and README's example run as written."""

import re
from pathlib import Path

import pytest
import torch
from tiny import tiny_tokenizer
from transformers import LlamaConfig, LlamaForCausalLM

import icr_app as icl
from icr_app.core.attention import ATTENTION
from icr_app.core.tasks import builtin_task

README = Path(__file__).resolve().parents[1] / "README.md"
TINY_SITE = {"n_prompts": 4, "n_demos": 2, "steps": 4, "batch_size": 4, "eval_every": 2, "patience": 2,
             "max_examples": 20}


def users_model():
    """A model as a user has it: eager attention, every parameter trainable, in eval mode."""
    tok = tiny_tokenizer()
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                      eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, tie_word_embeddings=True)
    model = LlamaForCausalLM(cfg).eval()
    model.set_attn_implementation("eager")
    return model, tok


def test_wrap_leaves_the_model_as_it_was_through_a_build_and_answers():
    model, tok = users_model()
    lm = icl.wrap(model, tok, name="mine")
    site = icl.build("site", lm, builtin_task("sentiment"), **TINY_SITE)
    site.predict(["An absolute joy.", "Dull."])
    assert lm.model is model
    assert all(p.requires_grad for p in model.parameters())
    assert all(p.grad is None for p in model.parameters())  # SITE asked for the gradient of its own θ only
    assert model.config._attn_implementation == "eager"
    assert not model.training


def test_the_users_attention_comes_back_when_a_call_raises():
    model, tok = users_model()
    lm = icl.wrap(model, tok)
    with pytest.raises(RuntimeError, match="inside"), lm.lock, lm.lock:
        assert model.config._attn_implementation == ATTENTION
        raise RuntimeError("inside")
    assert model.config._attn_implementation == "eager"


def test_build_predict_save_load_on_pairs(tmp_path):
    model, tok = users_model()
    lm = icl.wrap(model, tok)
    pairs = [(e.input, e.output) for e in builtin_task("sentiment").examples[:24]]
    site = icl.build("site", lm, pairs, **TINY_SITE)
    preds = site.predict(["An absolute joy."])
    assert set(preds[0].label_probs) == {"positive", "negative"}
    back = icl.load(site.save(tmp_path / "site.safetensors"), lm)
    assert back.predict(["An absolute joy."])[0].label_probs == pytest.approx(preds[0].label_probs)
    with pytest.raises(TypeError, match="keeps no built state"):
        icl.build("zero-shot", lm, pairs).save(tmp_path / "zs.safetensors")


def test_applied_runs_the_users_own_calls_as_predict_does():
    """Inside `applied`, the user's model(...) on the method's prompt gives the label probabilities `predict` gives,
    and outside it the model answers as before the block (nothing left behind)."""
    model, tok = users_model()
    lm = icl.wrap(model, tok)
    site = icl.build("site", lm, builtin_task("sentiment"), **TINY_SITE)
    query = "An absolute joy."
    expected = site.predict([query])[0]
    ids = tok(site.prompt(query), return_tensors="pt").input_ids
    before = model(ids).logits[0, -1]
    with site.applied([query]):
        assert model.config._attn_implementation == ATTENTION
        logits = model(ids).logits[0, -1]
    probs = torch.softmax(logits[list(site.label_set.first_ids)], -1)
    assert probs.tolist() == pytest.approx([expected.label_probs[label] for label in site.labels], abs=1e-4)
    assert not torch.allclose(logits, before)
    assert torch.allclose(model(ids).logits[0, -1], before)
    assert model.config._attn_implementation == "eager"


def test_the_registries_describe_every_method_and_analysis():
    methods, analyses = icl.methods(), icl.analyses()
    assert {"zero-shot", "few-shot", "site", "icr", "task-vector", "function-vector", "i2cl", "icv", "lora"} <= set(
        methods)
    assert all(spec.description and spec.config for spec in methods.values())
    assert {"anchors", "rank1"} <= set(analyses)


def readme_example() -> str:
    """The first Python block of README's "Use it from Python" section."""
    section = README.read_text().split("## Use it from Python", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.slow
def test_readme_example_runs_as_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(readme_example(), "README.md", "exec"), {})
    assert "positive" in capsys.readouterr().out
