"""The public Python API (`icr_app`): wrap leaves the user's model as it was, build / predict / save / load /
applied on it, the registries, and README's example run as written."""

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tiny import tiny_tokenizer
from torch.optim.optimizer import register_optimizer_step_pre_hook
from transformers import LlamaConfig, LlamaForCausalLM

import icr_app as icl
from icr_app.core.attention import ATTENTION
from icr_app.core.loading import LoadOptions
from icr_app.core.tasks import builtin_task
from icr_app.methods import REGISTRY

README = Path(__file__).resolve().parents[1] / "README.md"
TINY_SITE = {"n_prompts": 4, "n_demos": 2, "steps": 4, "batch_size": 4, "eval_every": 2, "patience": 2,
             "max_examples": 20}


def users_model(tied: bool = True):
    """A model as a user has it: eager attention, every parameter trainable, in eval mode. Untied (`tied=False`),
    its random output head makes greedy decoding wander: tied, it repeats the prompt's last token whatever is
    changed, which no generation test can tell apart."""
    tok = tiny_tokenizer()
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                      eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, tie_word_embeddings=tied)
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


def test_wrap_names_the_model_by_its_checkpoint_unless_told():
    model, tok = users_model()
    assert icl.wrap(model, tok).name == "llama"  # a model made from a config has no checkpoint path: its type
    assert icl.wrap(model, tok, "mine").fingerprint.startswith("mine@")


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


@pytest.mark.parametrize("name", ["icr", "task-vector", "lora"])
def test_a_built_method_round_trips_through_one_file(name, tmp_path, monkeypatch):
    """`Method.save` writes one safetensors file (ICR's router and PIDs too, not the router's folder) that `icl.load`
    reads back answering as the method did, which is not as zero-shot does; another model's file is refused."""
    model, tok = users_model()
    lm = icl.wrap(model, tok, "mine")
    task = builtin_task("sentiment")
    m = built(name, lm, task, tmp_path, monkeypatch)
    queries = ["An absolute joy.", "Dull and far too long for what it has to say."]
    path = m.save(tmp_path / "built" / "m.safetensors")
    assert [p.name for p in path.parent.iterdir()] == ["m.safetensors"]
    back = icl.load(path, lm)
    assert type(back) is type(m) and back.labels == m.labels
    probs = [p.label_probs for p in m.predict(queries)]
    assert [p.label_probs for p in back.predict(queries)] == [pytest.approx(p, abs=1e-6) for p in probs]
    zero = [p.label_probs for p in icl.build("zero-shot", lm, task).predict(queries)]
    assert max(abs(p[label] - z[label]) for p, z in zip(probs, zero) for label in p) > 1e-4
    with pytest.raises(icl.ArtefactModelError, match="made for model mine@"):
        icl.load(path, icl.wrap(model, tok, "another"))


@dataclasses.dataclass(frozen=True)
class ShoutConfig:
    ending: str = dataclasses.field(default="!", metadata={"help": "what every query ends with"})


class Shout(icl.Method):
    """A user's own method: the zero-shot prompt of the query in capitals."""

    name = "shout"

    def __init__(self, lm, answering, ending: str) -> None:
        super().__init__(lm, answering)
        self.ending = ending

    def prompt(self, x: str) -> str:
        return self.template.zero_shot(x.upper() + self.ending)


SHOUT = icl.MethodSpec(name="shout", title="Shout", description="the query in capitals", config=ShoutConfig,
                       build=lambda ctx, cfg: Shout(ctx.lm, ctx.answering, cfg.ending), kind="baseline", instant=True)


def test_a_users_own_method_registers_and_is_built_and_evaluated_like_the_others(lm):
    icl.register_method(SHOUT)
    try:
        assert icl.method_specs()["shout"] is SHOUT
        m = icl.build("shout", lm, "sentiment", ending="?!")
        assert m.predict(["a joy"])[0].prompt == m.template.zero_shot("A JOY?!")
        report = icl.evaluate(lm, "sentiment", ["zero-shot", "shout"], n_test=6, shots=2)
        assert report.failed == [] and report.runs[0].methods["shout"].n == 6
        with pytest.raises(ValueError, match="'shout' is already registered"):
            icl.register_method(SHOUT)
    finally:
        del REGISTRY["shout"]
    bare = dataclasses.make_dataclass("Bare", [("ending", str, dataclasses.field(default="!"))])
    with pytest.raises(TypeError, match="ending have no help text"):
        icl.register_method(dataclasses.replace(SHOUT, config=bare))
    assert "shout" not in icl.method_specs()


def test_evaluate_runs_once_per_seed_on_pairs(lm):
    pairs = [(e.input, e.output) for e in builtin_task("sentiment").examples[:30]]
    report = icl.evaluate(lm, pairs, ["zero-shot", "few-shot"], seeds=[0, 1], n_test=6, shots=2)
    data = report.to_json()
    assert [run.seed for run in report.runs] == data["seeds"] == [0, 1]
    assert [m["n"] for m in data["methods"].values()] == [12, 12]  # both seeds' items, pooled


def test_load_model_takes_the_options_given_over_the_options_object(tiny_checkpoint, monkeypatch):
    monkeypatch.setenv("ICL_LAB_DTYPE", "float16")  # read at the edges only, never by load_model
    from_env = LoadOptions.from_env()
    assert icl.load_model(tiny_checkpoint, from_env, dtype="bfloat16").dtype == torch.bfloat16
    assert icl.load_model(tiny_checkpoint, from_env).dtype == torch.float16


def test_the_errors_a_user_catches_are_exported(lm, tmp_path):
    with pytest.raises(icl.TaskError, match="no examples"):
        icl.build("site", lm, [])
    (tmp_path / "x.safetensors").write_text("not one")
    with pytest.raises(icl.ArtefactError, match="not a readable ICL Lab file"):
        icl.load(tmp_path / "x.safetensors", lm)
    assert issubclass(icl.ArtefactModelError, icl.ArtefactError)
    assert {"BuildError", "Cancelled", "ModelTooLargeError"} <= set(icl.__all__)


TINY = {  # every method that changes the model, at toy size (a build takes well under a second)
    "task-vector": {"n_prompts": 4, "val_size": 6, "batch_size": 4},
    "function-vector": {"n_prompts": 3, "n_corrupted": 2, "batch_size": 2},
    "i2cl": {"demos_per_class": 2, "open_demos": 4, "calibration_examples": 8, "epochs": 2, "batch_size": 4},
    "icv": {"n_demos": 4, "val_examples": 6, "strengths": [0.5]},  # a strength of 0 would change nothing
    "lora": {"steps": 4, "batch_size": 4, "max_examples": 16, "eval_every": 2, "patience": 2, "lr": 1e-2},
    "site": TINY_SITE,
}


def built(name, lm, task, tmp_path, monkeypatch, **config):
    """Method `name` built through the public API on the tiny task; ICR with a router made for `lm` (non-zero α,
    the stand-in encoder), saved and named, as a user passes their own."""
    if name == "icr":
        from helpers import hash_encoder, trained_like

        from icr_app.methods.icr import router as router_module
        from icr_app.methods.icr.pids import extract_pids

        monkeypatch.setattr(router_module, "minilm_encoder", lambda device: hash_encoder)
        pids = extract_pids(lm, [builtin_task("sentiment"), builtin_task("antonyms")], rank=4, n_prompts=4,
                            max_demos=4)
        trained_like(lm, pids, 0).save(tmp_path / "router")
        return icl.build("icr", lm, task, router=str(tmp_path / "router"))
    return icl.build(name, lm, task, shots=2, **TINY[name], **config)


def last_logits(model, batch) -> torch.Tensor:
    with torch.no_grad():
        return model(**batch).logits[:, -1]


@pytest.mark.parametrize("name", [*TINY, "icr"])
def test_applied_runs_the_users_own_calls_as_predict_does(name, tmp_path, monkeypatch):
    """Inside `applied`, the user's plain model(...) on the method's prompts (a left-padded batch) gives the label
    probabilities `predict` gives, which are not zero-shot's; after the block, also one left by an error, the model
    answers exactly as before it."""
    model, tok = users_model()
    m = built(name, icl.wrap(model, tok), builtin_task("sentiment"), tmp_path, monkeypatch)
    queries = ["An absolute joy.", "Dull and far too long for what it has to say."]
    expected = [[p.label_probs[label] for label in m.labels] for p in m.predict(queries)]
    batch = tok([m.prompt(q) for q in queries], return_tensors="pt", padding=True)
    before = last_logits(model, batch)
    with m.applied(queries):
        assert model.config._attn_implementation == ATTENTION
        logits = last_logits(model, batch)
    probs = torch.softmax(logits[:, m.label_set.first_ids], -1)
    assert probs.tolist()[0] == pytest.approx(expected[0], abs=1e-4)
    assert probs.tolist()[1] == pytest.approx(expected[1], abs=1e-4)
    assert (logits - before).abs().max() > 1e-3
    assert torch.equal(last_logits(model, batch), before)
    with pytest.raises(RuntimeError, match="inside"), m.applied(queries):
        last_logits(model, batch)
        raise RuntimeError("inside")
    assert torch.equal(last_logits(model, batch), before)
    assert model.config._attn_implementation == "eager"
    assert not any(module._forward_hooks or module._forward_pre_hooks for module in model.modules())


@pytest.mark.parametrize(("name", "config"), [("task-vector", {}), ("lora", {}), ("site", {}),
                                             ("site", {"decode_inject": True})])
def test_applied_generates_as_predict_does(name, config, tmp_path, monkeypatch):
    """The user's model.generate(...) inside `applied` answers an open task as `predict` does: the prefill with the
    method's change, each decoding step with its decoding change (SITE's `decode_inject`; LoRA's update), or none
    (the task vector's replacement at the prompt's last token is not repeated on the generated tokens)."""
    model, tok = users_model(tied=False)
    m = built(name, icl.wrap(model, tok), builtin_task("antonyms"), tmp_path, monkeypatch, **config)
    queries = ["hot", "early", "open"]
    expected = [p.generated for p in m.predict(queries)]
    for query, want in zip(queries, expected):
        ids = tok(m.prompt(query), return_tensors="pt")
        with m.applied([query]):
            out = model.generate(**ids, max_new_tokens=m.max_new_tokens, do_sample=False)
        assert tok.decode(out[0, ids.input_ids.shape[1]:], skip_special_tokens=True).split("\n")[0] == want


def test_the_registries_describe_every_method_and_analysis():
    methods, analyses = icl.method_specs(), icl.analysis_specs()
    assert {"zero-shot", "few-shot", "site", "icr", "task-vector", "function-vector", "i2cl", "icv", "lora"} <= set(
        methods)
    assert all(spec.description and spec.config for spec in methods.values())
    assert {"anchors", "rank1"} <= set(analyses)


WITHOUT_THE_PAGE = """
import sys
for name in ("gradio", "plotly", "kaleido"):  # as if not installed: import fails, find_spec finds nothing
    sys.modules[name] = None
"""


def readme_example() -> str:
    """README's Python example (its one ```python block)."""
    return re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)


@pytest.mark.slow
def test_readme_example_runs_without_the_pages_packages(tmp_path):
    """`pip install .` leaves out gradio, plotly and kaleido: README's example runs as written without them."""
    env = {**os.environ, "PYTHONPATH": str(README.parent), "HF_HUB_OFFLINE": "1"}
    run = subprocess.run([sys.executable, "-c", WITHOUT_THE_PAGE + readme_example()], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "positive" in run.stdout and "'accuracy'" in run.stdout
    assert (tmp_path / "sentiment-site.safetensors").is_file()


@pytest.mark.slow
def test_the_shipped_icr_router_round_trips_through_one_file(real_lm, tmp_path):
    """ICR with the router shipped for the default model, saved by `Method.save` to one file that `icl.load`
    reads back: the same answers, in a folder that holds nothing else."""
    icr = icl.build("icr", real_lm, "sentiment")
    back = icl.load(icr.save(tmp_path / "icr.safetensors"), real_lm)
    assert [p.name for p in tmp_path.iterdir()] == ["icr.safetensors"]
    queries = ["An absolute joy from start to finish.", "I want my two hours back."]
    want = [p.label_probs for p in icr.predict(queries)]
    assert [p.label_probs for p in back.predict(queries)] == [pytest.approx(p, abs=1e-6) for p in want]
    assert back.stored_parameters == icr.stored_parameters > 0


def train_icr_router(_name, lm, task, tmp_path, monkeypatch):
    from helpers import hash_encoder

    from icr_app.methods.icr.train import TrainConfig, train_router

    cfg = TrainConfig(rank=4, layers=[2, 3], pid_prompts=4, max_demos=4, examples_per_domain=8, holdout=8, epochs=1,
                      batch_size=4, lr=1e-2)
    router = train_router(lm, [task, builtin_task("antonyms")], tmp_path / "router", cfg, hash_encoder)
    assert router.net.alpha_mlp[-1].weight.abs().max() > 0  # trained away from its zero start


def reweight_anchors(_name, lm, task, tmp_path, monkeypatch):
    from icr_app.analyses.anchors.compression import fixed_demo_prompts
    from icr_app.analyses.anchors.reweighting import reweight_experiment
    from icr_app.core.prompts import Template

    train, prompts = fixed_demo_prompts(lm, task, 3, None, 0, Template())
    assert reweight_experiment(lm, task, train, prompts, Template(), per_class=1, epochs=1).beta_abs_mean > 0


TRAINING = {"site": built, "i2cl": built, "lora": built, "icr": train_icr_router,
            "anchors re-weighting": reweight_anchors}


@pytest.mark.parametrize("name", list(TRAINING))
def test_training_on_a_wrapped_model_reaches_only_what_it_trains(name, tmp_path, monkeypatch):
    """Every optimiser step of a method's or an analysis' training, on a model the user wrapped with trainable
    parameters, steps the method's own parameters, each with a gradient and some of them non-zero (LoRA's B and the
    router's last layer start at zero, so the first step moves them only); the model's parameters get no gradient
    and keep the `requires_grad` they had (some on, some off)."""
    model, tok = users_model()
    model.model.layers[0].requires_grad_(False)
    flags = [p.requires_grad for p in model.parameters()]
    models = {id(p) for p in model.parameters()}
    steps = []

    def record(optimizer, *_):
        params = [p for group in optimizer.param_groups for p in group["params"]]
        with_grads = all(p.grad is not None for p in params) and any(p.grad.any() for p in params)
        steps.append(with_grads and not models & set(map(id, params)))

    hook = register_optimizer_step_pre_hook(record)
    try:
        TRAINING[name](name, icl.wrap(model, tok), builtin_task("sentiment"), tmp_path, monkeypatch)
    finally:
        hook.remove()
    assert steps and all(steps)
    assert all(p.grad is None for p in model.parameters())
    assert [p.requires_grad for p in model.parameters()] == flags
