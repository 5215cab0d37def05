"""A calibrated I2CL as one artefact file (`core.artefacts`): tensors `vectors` and `coef`, `I2CLMeta` as JSON."""

from __future__ import annotations

from pathlib import Path

from icr_app.core.artefacts import ArtefactError, load_artefact, save_artefact
from icr_app.core.models import LoadedModel
from icr_app.methods.i2cl.method import I2CL, MODULES, I2CLMeta, I2CLState

KIND = "i2cl"


def save_i2cl(state: I2CLState, path: str | Path) -> Path:
    return save_artefact(path, KIND, {"vectors": state.vectors.float(), "coef": state.coef.float()},
                         state.meta.to_json(), state.fingerprint)


def load_i2cl(path: str | Path, lm: LoadedModel | None = None) -> I2CLState:
    """Read and verify an I2CL file; with `lm`, also refuse one built for another model (`ArtefactModelError`)."""
    art = load_artefact(path, KIND, None if lm is None else lm.fingerprint)
    name = Path(path).name
    try:
        meta = I2CLMeta(**art.meta)
        vectors, coef = art.tensors["vectors"], art.tensors["coef"]
    except (KeyError, TypeError) as err:
        raise ArtefactError(f"{name}: incomplete I2CL file: {err}") from None
    n = len(MODULES)
    if vectors.ndim != 3 or vectors.shape[1] != n or tuple(coef.shape) != (vectors.shape[0], n, 2):
        raise ArtefactError(f"{name}: inconsistent shapes vectors {tuple(vectors.shape)} and coef {tuple(coef.shape)}")
    state = I2CLState(vectors=vectors, coef=coef, meta=meta, fingerprint=art.fingerprint)
    if lm is not None:
        state.check_model(lm)
    return state


def save_method(method: I2CL, path: str | Path) -> Path:
    return save_i2cl(method.state, path)


def load_method(path: str | Path, lm: LoadedModel) -> I2CL:
    """The calibrated I2CL in a file, ready to answer; refuses a file made for another model."""
    state = load_i2cl(path, lm)
    method = I2CL(lm, state)
    method.build_s = state.meta.build_s
    return method
