"""Built methods where people serve them (docs/elsewhere.md): a LoRA written as a PEFT adapter folder answers in
peft as in ICL Lab; an adapter made with peft reads back as an ICL Lab method answering as peft does; what ICL Lab
cannot represent, pickles and another model's adapters are refused with a reason; the model handed in is never
changed; a method that has no form in a format says so."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from helpers import TINY_ICV, TINY_LORA
from peft import LoraConfig, PeftModel, get_peft_model
from tiny import build_state, family_lm, tiny_lm

import icr_app as icl
from icr_app.app.strings import strings
from icr_app.cli import main
from icr_app.core.artefacts import ArtefactError, ArtefactModelError
from icr_app.core.tasks import builtin_task
from icr_app.methods.base import Method
from icr_app.methods.lora.figures import summary
from icr_app.methods.lora.method import LoraMethod

QUERIES = ["An absolute joy from start to finish.", "I want my two hours back.", "A tender, funny film.",
           "Dull, and far too long."]


def trained_looking(lm) -> LoraMethod:
    """A LoRA built on `lm` (untrained: B = 0), then given random B, so its update is far from zero."""
    state = build_state(lm, builtin_task("sentiment"), "lora", replace(TINY_LORA, steps=0))
    gen = torch.Generator().manual_seed(1)
    tensors = {k: torch.randn(v.shape, generator=gen) * 0.3 if "lora_B" in k else v for k, v in state.tensors.items()}
    return LoraMethod(lm, replace(state, tensors=tensors))


def model_state(lm) -> tuple[dict, list]:
    """What must not change in the user's model: every tensor, every module's type, hooks and requires_grad."""
    tensors = {k: v.clone() for k, v in lm.model.state_dict().items()}
    modules = [(name, type(m), len(m._forward_hooks) + len(m._forward_pre_hooks))
               for name, m in lm.model.named_modules()]
    return tensors, modules + [tuple(p.requires_grad for p in lm.model.parameters())]


def unchanged(lm, before: tuple[dict, list]) -> bool:
    tensors, modules = model_state(lm)
    return modules == before[1] and tensors.keys() == before[0].keys() and all(
        torch.equal(v, before[0][k]) for k, v in tensors.items())


def logits(model, lm, prompts: list[str]) -> torch.Tensor:
    with torch.no_grad():
        return model(**lm.tokenizer(prompts, return_tensors="pt", padding=True)).logits


def in_peft(lm, folder) -> PeftModel:
    """The folder loaded by peft itself onto a copy of the model (peft wraps the modules of the model it gets)."""
    return PeftModel.from_pretrained(copy.deepcopy(lm.model), folder).eval()


def test_a_lora_as_a_peft_folder_answers_in_peft_as_in_icl_lab(lm, tmp_path):
    before = model_state(lm)
    method = trained_looking(lm)
    folder = icl.export(method, "peft", tmp_path / "adapter")
    assert sorted(p.name for p in folder.iterdir()) == ["adapter_config.json", "adapter_model.safetensors"]
    peft_model = in_peft(lm, folder)
    prompts = [method.prompt(q) for q in QUERIES]
    ours = logits(method.tuned.lm.model, lm, prompts)  # the merged copy `predict` answers with
    theirs = logits(peft_model, lm, prompts)
    assert (ours - theirs).abs().max() < 1e-4 and (ours - logits(lm.model, lm, prompts)).abs().max() > 0.1
    assert torch.equal(ours[:, -1].argmax(-1), theirs[:, -1].argmax(-1))
    # the same label probabilities when ICL Lab's scorer reads peft's model
    in_peft_scored = Method(icl.wrap(peft_model.get_base_model(), lm.tokenizer), method.answering).predict(QUERIES)
    for a, b in zip(method.predict(QUERIES), in_peft_scored):
        assert a.prediction == b.prediction
        assert all(abs(a.label_probs[k] - b.label_probs[k]) < 1e-5 for k in a.label_probs)
    assert unchanged(lm, before)


def test_a_folder_written_here_reads_back_as_the_same_method(lm, tmp_path):
    method = trained_looking(lm)
    back = icl.load(icl.export(method, "peft", tmp_path / "adapter"), lm)
    assert isinstance(back, LoraMethod) and back.answering == method.answering
    assert all(torch.equal(v, method.state.tensors[k]) for k, v in back.state.tensors.items())
    assert [p.label_probs for p in back.predict(QUERIES)] == [p.label_probs for p in method.predict(QUERIES)]
    # and saved as an ICL Lab file: random fp32 values are not rounded to fp16
    again = icl.load(back.save(tmp_path / "again.safetensors"), lm)
    assert all(torch.equal(v, method.state.tensors[k]) for k, v in again.state.tensors.items())


def peft_folder(lm, folder, seed: int = 0, **config) -> str:
    """An adapter made with peft directly on a copy of `lm`'s model, B random (peft starts it at 0)."""
    settings = {"r": 4, "lora_alpha": 8, "target_modules": ["q_proj", "v_proj", "down_proj"],
                "task_type": "CAUSAL_LM", **config}
    torch.manual_seed(seed)
    peft_model = get_peft_model(copy.deepcopy(lm.model), LoraConfig(**settings))
    with torch.no_grad():
        for name, p in peft_model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.3)
    peft_model.save_pretrained(folder)
    return str(folder)


def test_an_adapter_made_with_peft_answers_in_icl_lab_as_in_peft(lm, tmp_path):
    before = model_state(lm)
    folder = peft_folder(lm, tmp_path / "made-elsewhere")
    method = icl.load(folder, lm)
    assert isinstance(method, LoraMethod) and method.kind == "open"  # nothing says which task it learnt
    for lang, words in (("en", "trained elsewhere"), ("zh-CN", "在别处训练")):  # the page's summary of it
        assert words in summary(method.state, lambda key, **v: strings()[lang][key].format(**v))  # noqa: B023
    prompts = [method.prompt(q) for q in QUERIES]
    theirs = logits(in_peft(lm, folder), lm, prompts)
    with method.applied():  # the update added to the user's own calls, unmerged
        applied = logits(lm.model, lm, prompts)
    merged = logits(method.tuned.lm.model, lm, prompts)
    assert (applied - theirs).abs().max() < 1e-4 and (merged - theirs).abs().max() < 1e-4
    assert (theirs - logits(lm.model, lm, prompts)).abs().max() > 0.1  # the adapter does change the answers
    generated = Method(icl.wrap(in_peft(lm, folder).get_base_model(), lm.tokenizer), method.answering).predict(QUERIES)
    assert [p.generated for p in method.predict(QUERIES)] == [p.generated for p in generated]
    assert unchanged(lm, before)


@pytest.mark.parametrize("family", ["gpt2", "gpt_neox", "phi3"])
def test_fused_and_conv1d_projections_go_both_ways(family, tmp_path):
    """GPT-2's Conv1D c_attn (fan_in_fan_out), GPT-NeoX's and Phi-3's fused qkv: ICL Lab's LoRA as peft answers it,
    and peft's own adapter as ICL Lab answers it."""
    flm = family_lm(family)
    before = model_state(flm)
    prompts = [f"Input: {q}\nOutput:" for q in QUERIES]
    method = trained_looking(flm)
    exported = logits(in_peft(flm, icl.export(method, "peft", tmp_path / "ours")), flm, prompts)
    assert (exported - logits(method.tuned.lm.model, flm, prompts)).abs().max() < 1e-4
    targets, conv1d = list(flm.adapter.family.lora_targets), flm.adapter.family.conv1d
    folder = peft_folder(flm, tmp_path / "theirs", target_modules=targets, fan_in_fan_out=conv1d)
    with icl.load(folder, flm).applied():
        ours = logits(flm.model, flm, prompts)
    theirs = logits(in_peft(flm, folder), flm, prompts)
    assert (ours - theirs).abs().max() < 1e-4 and (theirs - logits(flm.model, flm, prompts)).abs().max() > 0.1
    assert unchanged(flm, before)


@pytest.mark.parametrize(("config", "refusal"), [
    ({"use_dora": True}, "use_dora"),
    ({"modules_to_save": ["lm_head"]}, "modules_to_save"),
    ({"use_rslora": True}, "use_rslora"),
    ({"bias": "lora_only"}, "bias"),
    ({"target_modules": ["embed_tokens"]}, "not a LoRA A or B weight"),
])
def test_what_icl_lab_cannot_represent_is_refused_by_name(lm, tmp_path, config, refusal):
    with pytest.raises(ArtefactError, match=refusal):
        icl.load(peft_folder(lm, tmp_path / "odd", **config), lm)


def test_another_base_model_is_refused(lm, tmp_path):
    with pytest.raises(ArtefactError, match="needs .*another base model"):  # GQA: a narrower v_proj
        icl.load(peft_folder(tiny_lm(n_kv_heads=4), tmp_path / "wide"), lm)
    with pytest.raises(ArtefactError, match="does not have"):
        icl.load(peft_folder(tiny_lm(n_layers=6), tmp_path / "deep"), lm)
    gpt2 = family_lm("gpt2")  # a folder written here says which model it was trained on
    with pytest.raises(ArtefactModelError, match="trained on model"):
        icl.load(icl.export(trained_looking(gpt2), "peft", tmp_path / "gpt2"), lm)


def test_tensors_that_are_no_linear_layers_lora_are_refused(lm, tmp_path):
    """A folder edited by hand: B of a norm layer, an A without its B, no weights at all."""
    from safetensors.torch import save_file

    folder = Path(peft_folder(lm, tmp_path / "edited"))
    weights = folder / "adapter_model.safetensors"
    q = "base_model.model.model.layers.0.self_attn.q_proj"
    for tensors, refusal in (({"base_model.model.model.norm.lora_A.weight": torch.zeros(4, 64)}, "a LlamaRMSNorm"),
                             ({f"{q}.lora_A.weight": torch.zeros(4, 64)}, "without its lora_B")):
        save_file(tensors, str(weights))
        with pytest.raises(ArtefactError, match=refusal):
            icl.load(folder, lm)
    weights.unlink()
    with pytest.raises(ArtefactError, match="no adapter_model.safetensors"):
        icl.load(folder, lm)


def test_a_pickled_adapter_is_never_loaded(lm, tmp_path):
    folder = tmp_path / "pickled"
    peft_folder(lm, folder)
    (folder / "adapter_model.safetensors").unlink()
    (folder / "adapter_model.bin").write_bytes(b"not even a pickle: it must not be opened")
    with pytest.raises(ArtefactError, match="pickle"):
        icl.load(folder, lm)
    config = json.loads((folder / "adapter_config.json").read_text())
    (folder / "adapter_config.json").write_text(json.dumps({**config, "peft_type": "IA3"}))
    with pytest.raises(ArtefactError, match="IA3 adapter"):
        icl.load(folder, lm)


def test_a_method_without_such_a_form_says_why(lm):
    task = builtin_task("sentiment")
    with pytest.raises(icl.ExportError, match="only lora trains"):
        icl.export(icl.build("zero-shot", lm, task), "peft", "unused")
    with pytest.raises(icl.ExportError, match="llama.cpp adds one fixed vector"):
        icl.export(trained_looking(lm), "llama-cpp", "unused.gguf")
    with pytest.raises(icl.ExportError, match="formats: peft, llama-cpp, steered"):
        icl.export(trained_looking(lm), "vllm", "unused")


def test_no_method_is_written_as_the_harness_steered_file(lm, tmp_path):
    """ICV, the closest (every block's output at every prompt position), renormalises each position: not one added
    vector, and lm-eval's SteeredModel would also steer the answer's tokens, which ICL Lab never changes."""
    icv = icl.build("icv", lm, builtin_task("sentiment"), **vars(TINY_ICV))
    with pytest.raises(icl.ExportError, match="SteeredModel adds fixed vectors"):
        icl.export(icv, "steered", tmp_path / "icv.pt")
    assert not (tmp_path / "icv.pt").exists()


def test_the_cli_exports_a_built_file(tiny_checkpoint, tmp_path, capsys):
    lm = icl.load_model(tiny_checkpoint)
    built = trained_looking(lm).save(tmp_path / "lora.safetensors")
    assert main(["export", "--artefact", str(built), "--to", "peft", "--out", str(tmp_path / "peft"),
                 "--model", tiny_checkpoint]) == 0
    assert f"-> peft: {tmp_path / 'peft'}" in capsys.readouterr().out
    back, direct = icl.load(tmp_path / "peft", lm), icl.load(built, lm)
    assert [p.label_probs for p in back.predict(QUERIES)] == [p.label_probs for p in direct.predict(QUERIES)]
    assert main(["export", "--artefact", str(built), "--to", "llama-cpp", "--out", str(tmp_path / "cv.gguf"),
                 "--model", tiny_checkpoint]) == 2
    assert "cannot be written as a llama.cpp control vector" in capsys.readouterr().err
