"""The one artefact format: a safetensors file whose header holds strict JSON, a model fingerprint and a checksum.

SITE tasks, PIDs, routers, checkpoints and every other method's state are saved this way. Tensors go in
the safetensors body; the header (string metadata) carries
- `format`: "icl-lab/1", and `kind`: what the file is ("site-task", "pids", "router", ...);
- `fingerprint`: the model the tensors belong to (`LoadedModel.fingerprint`), or "" for model-free files;
- `sha256`: a hash of every tensor's name, dtype, shape and bytes, so a flipped bit is caught, not only a cut;
- `meta`: the rest as strict JSON (no NaN or Infinity, on write and on read).
Loading never unpickles anything. Every failure is an `ArtefactError` whose message is meant for the user;
a file made for another model is an `ArtefactModelError`.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import save_file

from icr_app.core.errors import UserError

FORMAT = "icl-lab/1"


class ArtefactError(UserError):
    """An artefact that is missing, truncated, corrupted, of another kind, or otherwise unreadable."""


class ArtefactModelError(ArtefactError):
    """An artefact made for a model other than the loaded one."""


@dataclass
class Artefact:
    kind: str
    tensors: dict[str, torch.Tensor]
    meta: dict[str, Any]
    fingerprint: str


def checksum(tensors: dict[str, torch.Tensor]) -> str:
    h = hashlib.sha256()
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def _refuse_constant(where: str, constant: str) -> None:
    raise ArtefactError("artefact.not_json", file=where, constant=constant)


def private_name(path: Path) -> Path:
    """Where this thread writes what becomes `path` once whole: another user or process (a parallel benchmark)
    never reads it half-written, and a crash leaves nothing at `path` for later loads to trust."""
    return path.with_name(f"{path.name}.tmp{os.getpid()}-{threading.get_ident()}")


def save_artefact(path: str | Path, kind: str, tensors: dict[str, torch.Tensor], meta: dict[str, Any],
                  fingerprint: str = "") -> Path:
    """Write atomically (a temporary file, then rename), so a crash never leaves half a file at `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}
    header = {"format": FORMAT, "kind": kind, "fingerprint": fingerprint, "sha256": checksum(body),
              "meta": json.dumps(meta, allow_nan=False)}
    tmp = private_name(path)
    try:
        save_file(body, str(tmp), metadata=header)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _header(path: str | Path) -> dict[str, str]:
    """An ICL Lab file's header alone (no tensor is loaded or checked)."""
    try:
        with safe_open(str(path), framework="pt") as f:
            return f.metadata() or {}
    except Exception as err:  # safetensors raises several types for missing, cut or garbled files
        raise ArtefactError("artefact.unreadable", file=Path(path).name, err=str(err)) from None


def artefact_fingerprint(path: str | Path) -> str:
    """The model an artefact was made for, read off its header alone."""
    return _header(path).get("fingerprint", "")


def artefact_kind(path: str | Path) -> str:
    """What an ICL Lab file holds (its `kind`), read from its header alone; ArtefactError when it is not one."""
    header = _header(path)
    if header.get("format") != FORMAT or "kind" not in header:
        raise ArtefactError("artefact.not_ours", file=Path(path).name)
    return header["kind"]


def load_artefact(path: str | Path, kind: str, fingerprint: str | None = None, device: str = "cpu") -> Artefact:
    """Read and verify an artefact of `kind`; with `fingerprint`, refuse one made for another model."""
    path = Path(path)
    if not path.is_file():
        raise ArtefactError("artefact.no_such_file", file=str(path))
    try:
        with safe_open(str(path), framework="pt", device=device) as f:
            header = f.metadata() or {}
            tensors = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as err:  # safetensors raises several types for cut or garbled files
        raise ArtefactError("artefact.corrupted", file=path.name, err=str(err)) from None
    if header.get("format") != FORMAT:
        raise ArtefactError("artefact.old_format", file=path.name, found=header.get("format"), expected=FORMAT)
    if header.get("kind") != kind:
        raise ArtefactError("artefact.other_kind", file=path.name, found=header.get("kind"), kind=kind)
    if header.get("sha256") != checksum(tensors):
        raise ArtefactError("artefact.checksum", file=path.name)
    try:
        meta = json.loads(header["meta"], parse_constant=lambda c: _refuse_constant(path.name, c))
    except (KeyError, json.JSONDecodeError) as err:
        raise ArtefactError("artefact.bad_meta", file=path.name, err=str(err)) from None
    found = header.get("fingerprint", "")
    if fingerprint is not None and found != fingerprint:
        raise ArtefactModelError("artefact.other_model", file=path.name, found=found, loaded=fingerprint)
    return Artefact(kind, tensors, meta, found)


def shipped_file(root: Path, model: str, name: str, code: str, command: str) -> Path:
    """`root/<model>/<name>`, a file the package ships for a built-in model; an ArtefactError `code` naming the
    models it ships for and `command`, which makes one, when there is none."""
    path = root / model / name
    if path.parent.parent != root or not path.is_file():
        shipped = sorted(p.parent.name for p in root.glob(f"*/{name}"))
        raise ArtefactError(code, model=model, shipped=", ".join(shipped) or "none", command=command)
    return path
