"""A built ICV and its artefact file (`methods.state`): tensor `directions`, `ICVMeta` (λ and its sweep) as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from icr_app.methods.state import BuiltMeta, BuiltState, axes


@dataclass(kw_only=True)
class ICVMeta(BuiltMeta):
    """The chosen strength and how it was chosen (stored in the artefact beside `BuiltMeta`'s answering fields)."""

    strength: float
    direction: str
    site: str
    n_demos: int
    n_val: int
    sweep: list[dict[str, float]]  # one {"strength", "accuracy", "tiebreak"} per λ tried, in sweep order


@dataclass
class ICVState(BuiltState):
    """Unit directions (L, d), fp32 on the CPU, and the chosen strength in `meta`."""

    KIND = "icv"
    TITLE = "ICV"
    META = ICVMeta

    directions: torch.Tensor = field(metadata=axes("layers", "hidden"))
    meta: ICVMeta
    fingerprint: str
