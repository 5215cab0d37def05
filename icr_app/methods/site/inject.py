"""SITE's intervention: mix task embeddings into each head's output at the last prompt token.

`o[l, h] ← (1 − α[l, h])·o[l, h] + α[l, h]·t[l, h]` on the input of the attention's output projection (heads
contiguous). Batches are left-padded, so position −1 is every row's last real token. The edit builds a new
tensor (no in-place writes), so gradients reach α during training; the same edit serves training and
inference.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from icr_app.core.models import LoadedModel
from icr_app.core.trace import Trace


def mix_last(x: torch.Tensor, t: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    """x (B, T, H·d) with its last position mixed towards t (H, d) by alpha (H,)."""
    b, _, width = x.shape
    last = x[:, -1].reshape(b, *t.shape)
    a = alpha[:, None]
    mixed = ((1 - a) * last + a * t).to(x.dtype).reshape(b, 1, width)
    return torch.cat([x[:, :-1], mixed], dim=1)


@contextmanager
def inject(lm: LoadedModel, t: torch.Tensor, alpha: torch.Tensor) -> Iterator[dict[str, Any]]:
    """Inside the block, every forward of `lm` injects `t` (L, H, d_h) with weights `alpha` (L, H).

    An intervention: the runner holds `lm.lock` while it is live; the hooks are removed on exit.
    """
    t, alpha = t.to(lm.device), alpha.to(lm.device)
    targets = {layer: lm.adapter.head_out(layer) for layer in range(lm.n_layers)}
    with Trace(targets, edit_input=lambda layer, x: mix_last(x, t[layer], alpha[layer])):
        yield {}
