"""A calibrated I2CL and its artefact file (`methods.state`): tensors `vectors` and `coef`, `I2CLMeta` as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from icr_app.methods.state import BuiltMeta, BuiltState, axes

MODULES = ("attention", "mlp")  # index 1 of the vectors and coefficients


@dataclass(kw_only=True)
class I2CLMeta(BuiltMeta):
    """How an I2CL was calibrated (stored in the artefact beside `BuiltMeta`'s answering fields)."""

    n_demos: int
    n_calibration: int
    steps: int
    loss: str
    zero_shot_loss: float  # calibration-set loss with λ = 0, β = 1 (no noise), then at init, then calibrated
    init_loss: float
    calibrated_loss: float


@dataclass
class I2CLState(BuiltState):
    """Context vectors (L, 2, d) and coefficients (L, 2, 2): [..., 0] = λ, [..., 1] = β; module 0 attention."""

    KIND = "i2cl"
    TITLE = "I2CL"
    META = I2CLMeta

    vectors: torch.Tensor = field(metadata=axes("layers", len(MODULES), "hidden"))
    coef: torch.Tensor = field(metadata=axes("layers", len(MODULES), 2, trained=True))
    meta: I2CLMeta
    fingerprint: str
