"""A learned task vector and its artefact file (`methods.state`): the vector, the layer sweep that chose its
block, and `LearnedTaskVectorMeta` as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from icr_app.methods.last_token import LastTokenVector, VectorMeta
from icr_app.methods.state import axes


@dataclass(kw_only=True)
class LearnedTaskVectorMeta(VectorMeta):
    """How it was trained (`n_prompts`: the zero-shot prompts it was fitted on; `n_demos` is 0, as they show
    none) and the strength it answers with."""

    strength: float  # the vector is added times this (0: zero-shot)
    steps: int  # Adam steps at each block tried
    lr: float
    n_val: int
    zero_shot_val_loss: float
    zero_shot_val_accuracy: float


@dataclass
class LearnedTaskVectorState(LastTokenVector):
    """The vector (d,) added after block `meta.layer`, and per block (L,) what the sweep measured there: `tried`
    is 1 where a vector was trained (the others hold 0), with its held-out loss and accuracy, its norm, and the
    mean norm of the residual stream it is added to (held-out prompts' last token)."""

    KIND = "learned-task-vector"
    TITLE = "learned task vector"
    VECTOR = "vector"
    META = LearnedTaskVectorMeta

    vector: torch.Tensor = field(metadata=axes("hidden", trained=True))
    tried: torch.Tensor = field(metadata=axes("layers"))
    val_loss: torch.Tensor = field(metadata=axes("layers"))
    val_accuracy: torch.Tensor = field(metadata=axes("layers"))
    vector_norm: torch.Tensor = field(metadata=axes("layers"))
    residual_norm: torch.Tensor = field(metadata=axes("layers"))
    meta: LearnedTaskVectorMeta
    fingerprint: str

    @property
    def layers(self) -> list[int]:
        """The blocks the sweep trained at, in order."""
        return self.tried.nonzero().flatten().tolist()
