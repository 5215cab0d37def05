"""A built ICV as one artefact file (`core.artefacts`): tensor `directions`, `ICVMeta` (λ and its sweep) as JSON."""

from __future__ import annotations

from pathlib import Path

from icr_app.core.artefacts import ArtefactError, load_artefact, save_artefact
from icr_app.core.models import LoadedModel
from icr_app.methods.icv.method import ICV, ICVMeta, ICVState

KIND = "icv"


def save_icv(state: ICVState, path: str | Path) -> Path:
    return save_artefact(path, KIND, {"directions": state.directions.float()}, state.meta.to_json(),
                         state.fingerprint)


def load_icv(path: str | Path, lm: LoadedModel | None = None) -> ICVState:
    """Read and verify an ICV file; with `lm`, also refuse one built for another model (`ArtefactModelError`)."""
    art = load_artefact(path, KIND, None if lm is None else lm.fingerprint)
    name = Path(path).name
    try:
        meta = ICVMeta(**art.meta)
        directions = art.tensors["directions"]
    except (KeyError, TypeError) as err:
        raise ArtefactError(f"{name}: incomplete ICV file: {err}") from None
    if directions.ndim != 2:
        raise ArtefactError(f"{name}: directions should be (layers, hidden), not {tuple(directions.shape)}")
    state = ICVState(directions=directions, meta=meta, fingerprint=art.fingerprint)
    if lm is not None:
        state.check_model(lm)
    return state


def save_method(method: ICV, path: str | Path) -> Path:
    return save_icv(method.state, path)


def load_method(path: str | Path, lm: LoadedModel) -> ICV:
    """The ICV in a file, ready to answer; refuses a file made for another model."""
    state = load_icv(path, lm)
    method = ICV(lm, state)
    method.build_s = state.meta.build_s
    return method
