"""A built SITE task and its artefact file (`methods.state`): tensors `t` and `theta`, `SiteMeta` as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from icr_app.methods.state import BuiltMeta, BuiltState, axes


@dataclass(kw_only=True)
class SiteMeta(BuiltMeta):
    """How a SITE task was built (stored in the artefact beside `BuiltMeta`'s answering fields)."""

    n_prompts: int
    n_demos: int
    steps: int
    best_step: int
    train_loss: float
    val_loss: float
    val_accuracy: float
    objective: str = "first-token"


@dataclass
class SiteState(BuiltState):
    """Task embeddings `t` (L, H, d_h) and head-selection logits `theta` (L, H), both fp32 on CPU."""

    KIND = "site-task"
    TITLE = "SITE task"
    META = SiteMeta

    t: torch.Tensor = field(metadata=axes("layers", "heads", "head_dim"))
    theta: torch.Tensor = field(metadata=axes("layers", "heads", trained=True))
    meta: SiteMeta
    fingerprint: str

    @property
    def alpha(self) -> torch.Tensor:
        return torch.sigmoid(self.theta)


# The names `icl-lab build`, bench/latency.py and the tests read and write SITE files by.
save_site = SiteState.save
load_site = SiteState.load
