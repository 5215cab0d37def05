"""A trained LoRA adapter and its artefact file (`methods.state`): the A/B tensors, the peft config and `LoraMeta`
as JSON. `LoraMethod(lm, adapter)` rebuilds the private model from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from peft import LoraConfig

from icr_app.core.artefacts import Artefact, ArtefactError
from icr_app.methods.lora.train import Curve
from icr_app.methods.state import BuiltMeta, BuiltState


@dataclass(kw_only=True)
class LoraMeta(BuiltMeta):
    """How the adapter was trained (stored in the artefact beside `BuiltMeta`'s answering fields)."""

    curve: Curve
    n_fit: int
    n_val: int

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LoraMeta:
        return cls(**{**data, "curve": Curve(**data["curve"])})


def config_json(config: LoraConfig) -> dict[str, Any]:
    return {k: sorted(v) if isinstance(v, set) else v for k, v in config.to_dict().items()}


# Written by peft for information; every other field of a stored config must be one that `peft_config` sets (of
# its type) or peft's default (a field a file leaves out takes it, as peft reads it), so a file cannot switch on a
# feature (DoRA, LoftQ, layer replication, ...) that ICL Lab never tests.
_INFO_FIELDS = {"peft_version", "base_model_name_or_path", "revision", "inference_mode", "task_type", "auto_mapping"}
_SET_FIELDS: dict[str, type | tuple[type, ...]] = {"r": int, "lora_alpha": (int, float), "lora_dropout": (int, float),
                                                  "target_modules": list, "fan_in_fan_out": bool}
# How A and B were drawn before training: these leave the base weights alone (PiSSA, OLoRA, LoftQ, ... change them)
_PLAIN_INITS = (True, False, "gaussian")


def config_from_json(stored: dict[str, Any]) -> LoraConfig:
    """The LoraConfig a stored one describes; ArtefactError for anything `peft_config` would not have written."""
    wrong = [k for k, kind in _SET_FIELDS.items() if not isinstance(stored.get(k), kind)]
    if wrong or not all(isinstance(t, str) for t in stored["target_modules"]):
        raise ArtefactError("lora.config_fields", fields=", ".join(wrong) or "target_modules")
    stored = {**stored, "target_modules": sorted(stored["target_modules"])}  # a set, listed in any order
    try:
        config = LoraConfig(**{k: stored[k] for k in _SET_FIELDS})
    except (TypeError, ValueError) as err:
        raise ArtefactError("lora.config", err=str(err)) from None
    expected = config_json(config)
    odd = sorted(k for k in stored if k not in _INFO_FIELDS and stored[k] != expected.get(k)
                 and not (k == "init_lora_weights" and stored[k] in _PLAIN_INITS))
    if odd:
        raise ArtefactError("lora.config_settings", settings=", ".join(odd))
    return config


@dataclass
class LoraState(BuiltState):
    """The adapter tensors (peft's LoRA A/B state dict, fp32 on CPU; a built one's values are fp16 ones, which
    the file keeps in fp16), its peft config as JSON, and the model.

    Its tensors are named and shaped by peft, not declared here: merging checks them against the model's layers."""

    KIND = "lora"
    TITLE = "LoRA adapter"
    META = LoraMeta
    OTHER_MODEL = "artefact.trained_for_other_model"

    tensors: dict[str, torch.Tensor]
    peft: dict[str, Any]
    meta: LoraMeta
    fingerprint: str

    @property
    def n_parameters(self) -> int:
        return sum(t.numel() for t in self.tensors.values())

    def stored_tensors(self) -> dict[str, torch.Tensor]:
        # fp16 halves the file, without rounding a value: an adapter trained elsewhere in fp32 stays fp32
        return {k: v.half() if torch.equal(v.half().float(), v) else v for k, v in self.tensors.items()}

    def n_trained(self) -> int:
        return self.n_parameters  # every adapter tensor is trained

    def meta_json(self) -> dict[str, Any]:
        return {"peft": self.peft, "meta": self.meta.to_json()}

    @classmethod
    def from_artefact(cls, art: Artefact) -> LoraState:
        peft = art.meta["peft"]
        config_from_json(peft)
        return cls(tensors={k: v.float() for k, v in art.tensors.items()}, peft=peft,
                   meta=LoraMeta.from_json(art.meta["meta"]), fingerprint=art.fingerprint)

