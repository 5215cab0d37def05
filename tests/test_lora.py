"""LoRA on the tiny models: the untrained adapter is the neutral one, merging equals the unmerged adapter on every
family with the shared model untouched, training lowers the loss, and the artefact refuses settings ICL Lab never
writes (the neutral adapter, the round trip, another model's file and the shared model after an error:
test_contract.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from families import FAMILIES
from helpers import TINY_LORA, built_from_two_generator_states
from peft import set_peft_model_state_dict
from peft.tuners.lora import LoraLayer
from tiny import build_state, family_lm, tiny_lm

from icr_app.app.i18n import say
from icr_app.core.artefacts import ArtefactError
from icr_app.core.scoring import encode, prefill
from icr_app.core.tasks import builtin_task
from icr_app.evaluation import evaluate
from icr_app.methods import REGISTRY
from icr_app.methods.base import Answering
from icr_app.methods.lora.figures import parameter_bars, training_curve
from icr_app.methods.lora.method import (
    LoraConfig,
    LoraMethod,
    LoraState,
    config_from_json,
    with_adapter,
)
from icr_app.methods.zero_shot import ZeroShotMethod


def untrained(lm, task, settings: LoraConfig = TINY_LORA) -> LoraState:
    return build_state(lm, task, "lora", replace(settings, steps=0))


def randomised(adapter: LoraState, seed: int = 0) -> LoraState:
    """The same adapter with random B (a trained-looking update, so merging has something to merge)."""
    gen = torch.Generator().manual_seed(seed)
    tensors = {k: torch.randn(v.shape, generator=gen) * 0.2 if "lora_B" in k else v for k, v in adapter.tensors.items()}
    return replace(adapter, tensors=tensors)


def snapshot(lm) -> dict:
    return {k: v.clone() for k, v in lm.model.state_dict(keep_vars=False).items()}


def untouched(lm, before: dict) -> bool:
    """Bit-identical parameters, no peft layer, no peft config and no hook left in the shared model."""
    after = lm.model.state_dict()
    modules = list(lm.model.modules())
    return (after.keys() == before.keys() and all(torch.equal(before[k], after[k]) for k in before)
            and not any(isinstance(m, LoraLayer) for m in modules) and not hasattr(lm.model, "peft_config")
            and not any(m._forward_hooks or m._forward_pre_hooks for m in modules)
            and not any(p.requires_grad for p in lm.model.parameters()))


def same_answers(a: list, b: list) -> bool:
    return [(p.prompt, p.generated, p.label_probs) for p in a] == [(p.prompt, p.generated, p.label_probs) for p in b]


def test_an_untrained_adapter_is_the_neutral_one(lm):
    """A random, B = 0: the adapter training starts from is the spec's neutral setting (test_contract.py)."""
    method = LoraMethod(lm, untrained(lm, builtin_task("sentiment")))
    adapter, neutral = method.state, REGISTRY["lora"].neutral(method).state
    assert any("lora_A" in k and v.abs().sum() > 0 for k, v in adapter.tensors.items())
    assert all(torch.equal(v, neutral.tensors[k]) for k, v in adapter.tensors.items())


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_shapes_merge_and_shared_model(family):
    """Adapters on the family's attention projections with the right shapes (GQA's narrower v, fused qkv,
    GPT-2's Conv1D), a merged one equals the adapter unmerged, and the shared model is bit-identical throughout."""
    flm = family_lm(family)
    before = snapshot(flm)
    task = builtin_task("sentiment")
    adapter = untrained(flm, task)
    targets, conv1d = set(flm.adapter.family.lora_targets), flm.adapter.family.conv1d
    assert set(adapter.peft["target_modules"]) == targets and adapter.peft["fan_in_fan_out"] == conv1d
    assert len(adapter.tensors) == 2 * len(targets) * flm.n_layers
    for layer in range(flm.n_layers):
        for name in targets:
            module = getattr(flm.adapter.attention(layer), name)
            fan_in, fan_out = module.weight.shape if conv1d else module.weight.shape[::-1]
            key = next(k for k in adapter.tensors if f".{layer}." in k and f".{name}.lora_A" in k)
            assert adapter.tensors[key].shape == (TINY_LORA.rank, fan_in)
            assert adapter.tensors[key.replace("lora_A", "lora_B")].shape == (fan_out, TINY_LORA.rank)
    queries = task.inputs[:6]

    trained = randomised(adapter)
    merged = LoraMethod(flm, trained)
    unmerged, peft_model = with_adapter(flm, config_from_json(trained.peft))
    set_peft_model_state_dict(peft_model, trained.tensors)
    prompts = [merged.prompt(x) for x in queries]
    with torch.no_grad():
        plain = prefill(flm, encode(flm, prompts))
        want = prefill(unmerged, encode(unmerged, prompts))
        got = prefill(merged.tuned.lm, encode(merged.tuned.lm, prompts))
    torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)
    assert not torch.allclose(got, plain, atol=1e-3)  # the update really changes the answers
    assert merged.lm is flm and merged.tuned.lm is not flm and merged.tuned.lm.fingerprint == flm.fingerprint
    assert not any(isinstance(m, LoraLayer) for m in merged.tuned.lm.model.modules())
    assert untouched(flm, before)


def test_all_linear_targets_attention_and_mlp(lm):
    adapter = untrained(lm, builtin_task("sentiment"), replace(TINY_LORA, targets="all-linear"))
    assert set(adapter.peft["target_modules"]) == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                   "down_proj"}
    qv = untrained(lm, builtin_task("sentiment"))
    assert adapter.n_parameters > 3 * qv.n_parameters
    queries = builtin_task("sentiment").inputs[:4]
    assert same_answers(LoraMethod(lm, adapter).predict(queries), ZeroShotMethod(lm, LoraMethod(lm, adapter).answering)
                        .predict(queries))


def test_training_lowers_the_loss(lm):
    """On the tiny model LoRA learns at least the answers' form: the held-out answer loss falls, and the
    training examples' gold label gets more probability than zero-shot gives it."""
    task = builtin_task("sentiment")
    cfg = LoraConfig(steps=30, lr=5e-3, batch_size=8, max_examples=40, eval_every=5, patience=10)
    seen = []

    def progress(it, **_):
        seen.append(len(it))
        return it

    adapter = build_state(lm, task, "lora", cfg, progress=progress)
    c = adapter.meta.curve
    assert seen == [cfg.steps] and c.best_step > 0 and len(c.train_loss) <= cfg.steps
    assert c.val_loss[c.val_step.index(c.best_step)] < c.val_loss[0]
    assert sum(c.train_loss[-5:]) < sum(c.train_loss[:5])
    queries, gold = task.inputs[:16], task.outputs[:16]
    tuned = LoraMethod(lm, adapter).predict(queries)
    plain = ZeroShotMethod(lm, Answering.of(lm, task)).predict(queries)
    assert sum(p.label_probs[y] for p, y in zip(tuned, gold)) > sum(p.label_probs[y] for p, y in zip(plain, gold))
    fig = training_curve(adapter, say)
    assert list(fig.data[0].y) == c.train_loss and list(fig.data[2].y) == c.val_accuracy
    assert list(parameter_bars(adapter.n_parameters, 16, say).data[0].y) == [adapter.n_parameters, 16]


def test_a_build_is_the_same_whatever_the_global_generator(lm):
    """Dropout draws from the global generator, which a fresh process seeds at random: builds begun from two of
    its states give the same trained adapter, and leave the caller's generator where it was."""
    task, settings = builtin_task("sentiment"), replace(TINY_LORA, steps=3, dropout=0.5)
    first, second = built_from_two_generator_states(lambda: build_state(lm, task, "lora", settings))
    assert first.meta.curve.best_step > 0 and any("lora_B" in k and v.abs().sum() > 0 for k, v in first.tensors.items())
    assert first.tensors.keys() == second.tensors.keys()
    assert all(torch.equal(v, second.tensors[k]) for k, v in first.tensors.items())


def test_evaluate_reports_lora_as_a_method(lm):
    rep = evaluate(lm, builtin_task("sentiment"), ["zero-shot", "lora"], n_test=6, seed=0, shots=2,
                   configs={"lora": TINY_LORA})
    assert not rep.failed
    res = rep.methods["lora"]
    # per layer: q's A (r × hidden) and B (heads·d × r), v's A (r × hidden) and B (kv heads·d × r)
    qv = lm.n_layers * TINY_LORA.rank * (2 * lm.model.config.hidden_size + (lm.n_heads + lm.n_kv_heads) * lm.head_dim)
    assert res.trainable_parameters == res.stored_parameters == qv
    assert res.n == 6 and res.latency_ratio_to_zero_shot > 0


def test_the_file_keeps_the_adapter_in_fp16_exactly(lm, tmp_path):
    """Built adapters are rounded to fp16 and saved so: the file is half the bytes, and the loaded adapter is
    the built one to the bit, answering the same."""
    from safetensors import safe_open

    task = builtin_task("sentiment")
    built = LoraMethod(lm, build_state(lm, task, "lora", replace(TINY_LORA, steps=3)))
    path = built.save(tmp_path / "a.safetensors")
    with safe_open(str(path), "pt") as f:
        assert {f.get_slice(k).get_dtype() for k in f.keys()} == {"F16"}
    loaded = LoraState.load(path, lm)
    assert loaded.tensors.keys() == built.state.tensors.keys()
    assert all(v.dtype == torch.float32 and torch.equal(v, built.state.tensors[k]) for k, v in loaded.tensors.items())
    assert any(v.abs().sum() > 0 for k, v in loaded.tensors.items() if "lora_B" in k)  # trained, not neutral
    assert same_answers(LoraMethod(lm, loaded).predict(task.inputs[:4]), built.predict(task.inputs[:4]))


def test_odd_files_are_refused(lm, tmp_path):
    adapter = untrained(lm, builtin_task("sentiment"))
    for change in ({"use_dora": True}, {"layer_replication": [[0, 2]]}, {"target_modules": ".*"}, {"r": "8"}):
        odd = replace(adapter, peft={**adapter.peft, **change}).save(tmp_path / "odd.safetensors")
        with pytest.raises(ArtefactError):
            LoraState.load(odd, lm)
    short = {k: v for k, v in adapter.tensors.items() if ".0." not in k}
    with pytest.raises(ArtefactError, match="do not fit"):  # the merge, at the first answer, finds it
        LoraMethod(lm, replace(adapter, tensors=short)).predict(["a query"])
    data = adapter.save(tmp_path / "a.safetensors").read_bytes()
    (tmp_path / "flip.safetensors").write_bytes(data[:-10] + bytes([data[-10] ^ 1]) + data[-9:])
    with pytest.raises(ArtefactError, match="checksum"):
        LoraState.load(tmp_path / "flip.safetensors", lm)


def test_flags():
    from icr_app.cli import build_parser
    from icr_app.cli.flags import method_config
    from icr_app.methods import REGISTRY

    spec = REGISTRY["lora"]
    assert spec.kind == "fine-tuning" and "fine-tuning" in spec.title and "not in-context" in spec.description
    args = build_parser().parse_args(["eval", "--data", "x", "--lora-targets", "all-linear", "--lora-steps", "7"])
    assert method_config(args, "lora") == replace(LoraConfig(), targets="all-linear", steps=7)


@pytest.fixture(scope="module")
def server(lm):
    from icr_app.app import launch

    demo = launch(lm, prevent_thread_lock=True, server_name="127.0.0.1", server_port=None, quiet=True)
    yield demo.local_url
    demo.close()


@pytest.mark.slow
def test_app_tab_trains_answers_and_round_trips_the_adapter(server, lm, tmp_path):
    """Fine-tune in the tab, answer with it in the side-by-side panel, download the adapter and load it into a
    fresh session: the same answer; another model's file is refused."""
    import json

    from gradio_client import Client, handle_file

    query, shown = "a dull and noisy film", ["zero-shot", "lora"]
    c = Client(server, verbose=False)
    c.predict("sentiment", api_name="/load_builtin")
    curve, bars, info, download = c.predict(4, 0, api_name="/build_lora")
    adapter = LoraState.load(download, lm)
    assert "LoRA for **sentiment**" in info and adapter.meta.task == "sentiment"
    assert len(adapter.meta.curve.train_loss) == 4
    assert json.loads(curve["plot"])["data"][0]["y"] == adapter.meta.curve.train_loss
    assert json.loads(bars["plot"])["data"][0]["y"] == [adapter.n_parameters]
    md, _fig, prompt = c.predict(query, 4, 0, shown, api_name="/answer_lora")
    want = LoraMethod(lm, adapter).predict([query])[0].prediction
    assert prompt == f"Input: {query}\nOutput:" and md.split("\n")[1] == f"**{want}**"
    fresh = Client(server, verbose=False)
    fresh.predict("sentiment", api_name="/load_builtin")
    assert "not built" in fresh.predict(query, 4, 0, shown, api_name="/answer_lora")[0]
    fresh.predict(handle_file(download), api_name="/load_lora")
    assert fresh.predict(query, 4, 0, shown, api_name="/answer_lora")[0].split("\n")[1] == f"**{want}**"
    other = untrained(tiny_lm(n_layers=2), builtin_task("sentiment")).save(tmp_path / "other.safetensors")
    with pytest.raises(Exception, match="tiny-llama@"):
        fresh.predict(handle_file(str(other)), api_name="/load_lora")
