"""Artefacts of ICR (PIDs, routers, checkpoints): safetensors for tensors, JSON for the rest.

Every artefact is stamped with the model fingerprint and refused on load when the model differs, since
PIDs and routers are tied to one model's layer count, head count and projection spaces. No pickles.
"""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from icr_app.models import LoadedModel


class ArtefactError(ValueError):
    """An artefact that is missing, malformed, or made for another model."""


def _not_json(path: Path, constant: str) -> None:
    # Strict on read as on write: a NaN accepted here would be written back later and fail there instead.
    raise ArtefactError(f"{path} holds {constant}, which is not valid JSON; write it again (null, not NaN)")


def save_artefact(folder: str | Path, stem: str, tensors: dict[str, torch.Tensor], meta: dict[str, Any]) -> None:
    """Write `stem.safetensors` then `stem.json`, each atomically (temporary file, then rename)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tmp_tensors = folder / f"{stem}.safetensors.tmp{os.getpid()}"
    save_file({k: v.detach().cpu().contiguous() for k, v in tensors.items()}, tmp_tensors)
    tmp_tensors.replace(folder / f"{stem}.safetensors")
    tmp = folder / f"{stem}.json.tmp{os.getpid()}"
    tmp.write_text(json.dumps(meta, indent=2, allow_nan=False))  # strict JSON
    tmp.replace(folder / f"{stem}.json")


def load_artefact(folder: str | Path, stem: str, lm: LoadedModel | None = None,
                  ) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Read a pair written by `save_artefact`; with `lm`, refuse it unless its fingerprint matches.

    The JSON is read strictly (no NaN or Infinity), as `save_artefact` writes it.
    """
    folder = Path(folder)
    meta_path, tensor_path = folder / f"{stem}.json", folder / f"{stem}.safetensors"
    if not meta_path.is_file() or not tensor_path.is_file():
        raise ArtefactError(f"{folder}: no {stem}.json / {stem}.safetensors pair")
    meta = json.loads(meta_path.read_text(), parse_constant=partial(_not_json, meta_path))
    if lm is not None and meta.get("fingerprint") != lm.fingerprint:
        raise ArtefactError(
            f"{meta_path} was made for model {meta.get('fingerprint')}, not {lm.fingerprint}; "
            "train or extract it again for this model")
    device = "cpu" if lm is None else str(lm.device)
    return load_file(tensor_path, device=device), meta
