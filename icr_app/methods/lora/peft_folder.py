"""A LoRA as a PEFT adapter folder, both ways: what `peft.PeftModel.from_pretrained(model, folder)` (and the
serving stacks that read PEFT folders) loads, and such a folder made elsewhere read back as a `LoraMethod`.

A folder holds `adapter_config.json` (peft's LoraConfig as JSON) and `adapter_model.safetensors` (the A and B
weights under peft's names, `base_model.model.<module>.lora_A.weight`), which are the names `LoraState` keeps, so
writing is renaming nothing. A folder written here also carries, in the safetensors header (which peft ignores),
the fingerprint of the model the adapter was trained on and its `LoraMeta`, so reading it back gives the method
that was exported, answering its task as before. One made elsewhere has neither: it is checked against the
model (every module it changes exists, is linear and has the adapter's shapes) and answers as an open task in
the default template. Weights are read from safetensors only; a pickled `adapter_model.bin` is refused.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import save_file
from torch import nn
from transformers.pytorch_utils import Conv1D

from icr_app.core.artefacts import ArtefactError
from icr_app.core.models import LoadedModel
from icr_app.core.prompts import Template
from icr_app.methods.base import MAX_NEW_TOKENS, Answering, Method
from icr_app.methods.lora.artefact import LoraMeta, LoraState, config_from_json
from icr_app.methods.lora.method import LoraMethod
from icr_app.methods.lora.train import Curve
from icr_app.methods.state import built_fields

CONFIG, WEIGHTS, PICKLE = "adapter_config.json", "adapter_model.safetensors", "adapter_model.bin"
FINGERPRINT, META = "icl_lab_fingerprint", "icl_lab_meta"  # safetensors header keys of a folder written here
_KEY = re.compile(r"base_model\.model\.(?P<module>.+)\.lora_(?P<factor>[AB])\.weight")


def write_peft(method: Method, folder: Path) -> Path:
    """`method`'s adapter (a `LoraMethod`) as a PEFT folder at `folder`, fp32 (the values answered with)."""
    state: LoraState = method.state  # type: ignore[attr-defined]
    folder.mkdir(parents=True, exist_ok=True)
    # as peft's save_pretrained writes it: for inference, and for a causal LM (PeftModelForCausalLM)
    config = {**state.peft, "inference_mode": True, "task_type": "CAUSAL_LM"}
    (folder / CONFIG).write_text(json.dumps(config, indent=2, sort_keys=True, allow_nan=False) + "\n")
    header = {"format": "pt", FINGERPRINT: state.fingerprint, META: json.dumps(state.meta.to_json(), allow_nan=False)}
    save_file({k: v.float().contiguous() for k, v in state.tensors.items()}, str(folder / WEIGHTS), metadata=header)
    return folder


def is_peft_folder(path: Path) -> bool:
    return path.is_dir() and (path / CONFIG).is_file()


def _read_config(folder: Path) -> dict[str, Any]:
    try:
        config = json.loads((folder / CONFIG).read_text(encoding="utf-8"),
                            parse_constant=lambda c: _refuse(folder, f"{c} is not JSON"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ArtefactError("peft.bad_config", folder=folder.name, err=str(err)) from None
    if not isinstance(config, dict):
        _refuse(folder, "not an object")
    if config.get("peft_type") != "LORA":
        raise ArtefactError("peft.not_lora", folder=folder.name, peft_type=config.get("peft_type"))
    return config


def _refuse(folder: Path, err: str) -> None:
    raise ArtefactError("peft.bad_config", folder=folder.name, err=err)


def _read_weights(folder: Path) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """The folder's tensors (fp32) and header; never the pickle."""
    path = folder / WEIGHTS
    if not path.is_file():
        raise ArtefactError("peft.pickle" if (folder / PICKLE).exists() else "peft.no_weights", folder=folder.name)
    try:
        with safe_open(str(path), framework="pt") as f:
            return {k: f.get_tensor(k).float() for k in f.keys()}, f.metadata() or {}
    except Exception as err:  # safetensors raises several types for cut or garbled files
        raise ArtefactError("artefact.corrupted", file=f"{folder.name}/{WEIGHTS}", err=str(err)) from None


def _fan(module: nn.Module) -> tuple[int, int] | None:
    """(in, out) features of a layer a LoRA update can be added to; None for any other module."""
    if isinstance(module, nn.Linear):
        return module.in_features, module.out_features
    if isinstance(module, Conv1D):  # GPT-2's: weight (in, out)
        return tuple(module.weight.shape)  # type: ignore[return-value]
    return None


def check_tensors(folder: Path, lm: LoadedModel, tensors: dict[str, torch.Tensor], rank: int) -> None:
    """Every tensor is a LoRA A or B of a linear layer of `lm`'s model, paired and shaped for it at `rank`."""
    factors: dict[str, set[str]] = {}
    for key, t in tensors.items():
        match = _KEY.fullmatch(key)
        if match is None:
            raise ArtefactError("peft.tensor", folder=folder.name, name=key)
        name, factor = match["module"], match["factor"]
        factors.setdefault(name, set()).add(factor)
        try:
            fan = _fan(lm.model.get_submodule(name))
        except AttributeError:
            raise ArtefactError("peft.no_module", folder=folder.name, module=name, model=lm.name) from None
        if fan is None:
            kind = type(lm.model.get_submodule(name)).__name__
            raise ArtefactError("peft.module_type", folder=folder.name, module=name, type=kind)
        expected = (rank, fan[0]) if factor == "A" else (fan[1], rank)
        if tuple(t.shape) != expected:
            raise ArtefactError("peft.shape", folder=folder.name, tensor=key, found=list(t.shape), module=name,
                                model=lm.name, expected=list(expected))
    for name, found in factors.items():
        if found != {"A", "B"}:
            raise ArtefactError("peft.unpaired", folder=folder.name, module=name)


def _meta(folder: Path, lm: LoadedModel, header: dict[str, str]) -> LoraMeta:
    """The `LoraMeta` a folder written here carries; for one made elsewhere, an open task in the default template
    (nothing says which task it learnt, nor its labels)."""
    if META in header:
        try:
            return LoraMeta.from_json(json.loads(header[META]))
        except (KeyError, TypeError, ValueError) as err:
            raise ArtefactError("artefact.bad_meta", file=f"{folder.name}/{WEIGHTS}", err=str(err)) from None
    answering = Answering("open", (), Template(), MAX_NEW_TOKENS)
    return LoraMeta(task=folder.name, **built_fields(lm, answering), build_s=0.0, curve=Curve(), n_fit=0, n_val=0)


def load_peft(folder: Path, lm: LoadedModel) -> LoraMethod:
    """The LoRA a PEFT folder holds, answering on `lm` (whose model is never changed: `LoraMethod` merges into a
    private copy); `ArtefactError` for what ICL Lab's LoRA cannot represent, and for another model's adapter."""
    peft = _read_config(folder)
    config = config_from_json(peft)  # refuses DoRA, rsLoRA, modules_to_save, bias, rank patterns, ...
    tensors, header = _read_weights(folder)
    state = LoraState(tensors=tensors, peft=peft, meta=_meta(folder, lm, header),
                      fingerprint=header.get(FINGERPRINT, lm.fingerprint))  # from elsewhere: the shapes judge
    method = LoraMethod(lm, state)  # refuses a folder written here for another model
    check_tensors(folder, lm, tensors, config.r)
    return method
