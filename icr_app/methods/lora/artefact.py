"""A trained LoRA adapter as one artefact file (`core.artefacts`): the A/B tensors, the peft config and
`LoraMeta` as JSON. Loading gives a `LoraAdapter`; `LoraMethod(lm, adapter)` rebuilds the private model."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from icr_app.core.artefacts import ArtefactError, load_artefact, save_artefact
from icr_app.core.models import LoadedModel
from icr_app.methods.lora.method import LoraAdapter, LoraMeta, LoraMethod, config_from_json

KIND = "lora"


def save_lora(adapter: LoraAdapter, path: str | Path) -> Path:
    return save_artefact(path, KIND, adapter.tensors, {"peft": adapter.peft, "meta": asdict(adapter.meta)},
                         adapter.fingerprint)


def load_lora(path: str | Path, lm: LoadedModel | None = None) -> LoraAdapter:
    """Read and verify a LoRA file; with `lm`, also refuse one trained on another model (`ArtefactModelError`)."""
    art = load_artefact(path, KIND, None if lm is None else lm.fingerprint)
    try:
        meta, peft = LoraMeta.from_json(art.meta["meta"]), art.meta["peft"]
    except (KeyError, TypeError) as err:
        raise ArtefactError(f"{Path(path).name}: incomplete LoRA file: {err}") from None
    config_from_json(peft)
    return LoraAdapter(tensors=art.tensors, peft=peft, meta=meta, fingerprint=art.fingerprint)


def save_method(method: LoraMethod, path: str | Path) -> Path:
    return save_lora(method.adapter, path)


def load_method(path: str | Path, lm: LoadedModel) -> LoraMethod:
    """The method a LoRA file describes, rebuilt on `lm` (which must be the model it was trained on)."""
    return LoraMethod(lm, load_lora(path, lm))
