"""Saving and loading a SITE task: one safetensors file, tensors `t` and `theta`, JSON metadata in its header.

The header also carries a SHA-256 of the tensor bytes, so a flipped bit is caught, not just a cut
file. Every failure is a `SiteArtefactError` with a message meant for the user.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file

from icr_app.models import LoadedModel
from icr_app.site import SiteMeta, SiteTask

FORMAT = "icl-lab/site/1"


class SiteArtefactError(ValueError):
    """A SITE file that cannot be read: missing, truncated, corrupted, or not a SITE file."""


def _digest(t: torch.Tensor, theta: torch.Tensor) -> str:
    h = hashlib.sha256()
    for x in (t, theta):
        h.update(x.contiguous().numpy().tobytes())
    return h.hexdigest()


def save_site(site: SiteTask, path: str | Path) -> Path:
    """Write atomically (a temporary file, then rename), so a crash never leaves half a file at `path`."""
    path = Path(path)
    t, theta = site.t.detach().float().cpu().contiguous(), site.theta.detach().float().cpu().contiguous()
    header = {"format": FORMAT, "meta": json.dumps(site.meta.to_json()), "sha256": _digest(t, theta)}
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        save_file({"t": t, "theta": theta}, str(tmp), metadata=header)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def load_site(path: str | Path, lm: LoadedModel | None = None) -> SiteTask:
    """Read and verify a SITE file; with `lm`, also refuse one built for another model (`SiteModelError`)."""
    path = Path(path)
    if not path.is_file():
        raise SiteArtefactError(f"{path}: no such file")
    try:
        with safe_open(str(path), framework="pt") as f:
            header = f.metadata() or {}
            t, theta = f.get_tensor("t"), f.get_tensor("theta")
    except Exception as err:  # safetensors raises several types for cut or garbled files
        raise SiteArtefactError(f"{path.name}: not a readable SITE file (corrupted or truncated?): {err}") from None
    if header.get("format") != FORMAT:
        raise SiteArtefactError(f"{path.name}: not a SITE file (format {header.get('format')!r}, expected {FORMAT})")
    if header.get("sha256") != _digest(t, theta):
        raise SiteArtefactError(f"{path.name}: the tensor data does not match its checksum (the file is corrupted)")
    try:
        meta = SiteMeta(**json.loads(header["meta"]))
    except (KeyError, TypeError, json.JSONDecodeError) as err:
        raise SiteArtefactError(f"{path.name}: unreadable SITE metadata: {err}") from None
    if theta.ndim != 2 or t.shape[:2] != theta.shape:
        raise SiteArtefactError(f"{path.name}: inconsistent shapes t {tuple(t.shape)} and theta {tuple(theta.shape)}")
    site = SiteTask(t=t, theta=theta, meta=meta)
    if lm is not None:
        site.check_model(lm)
    return site

