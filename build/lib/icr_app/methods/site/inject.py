"""SITE's intervention: mix task embeddings into each head's output at the last prompt token.

`o[l, h] ← (1 − α[l, h])·o[l, h] + α[l, h]·t[l, h]` on the input of the attention's output projection (heads
contiguous). At inference batches are left-padded, so position −1 is every row's last real token; in training
the forward pass starts at the last prompt token (the prefix is cached) and answer tokens may follow it, so
the edit goes at position 0. The edit builds a new tensor (no in-place writes), so gradients reach α during
training; the same edit serves training and inference.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from icr_app.core.models import LoadedModel
from icr_app.core.trace import Trace


def mix_at(x: torch.Tensor, t: torch.Tensor, alpha: torch.Tensor, position: int) -> torch.Tensor:
    """x (B, T, H·d) with one position mixed towards t (H, d) by alpha (H,)."""
    b, n, width = x.shape
    p = position % n
    t, a = t.to(x.device), alpha.to(x.device)[:, None]  # the layer's device, when the model is spread over several
    mixed = ((1 - a) * x[:, p].reshape(b, *t.shape) + a * t).to(x.dtype).reshape(b, 1, width)
    return torch.cat([x[:, :p], mixed, x[:, p + 1:]], dim=1)


@contextmanager
def inject(lm: LoadedModel, t: torch.Tensor, alpha: torch.Tensor, position: int = -1) -> Iterator[dict[str, Any]]:
    """Inside the block, every forward of `lm` injects `t` (L, H, d_h) with weights `alpha` (L, H) at
    `position` of its input.

    An intervention: the runner holds `lm.lock` while it is live; the hooks are removed on exit.
    """
    t, alpha = t.to(lm.device), alpha.to(lm.device)
    targets = {layer: lm.adapter.head_out(layer) for layer in range(lm.n_layers)}
    with Trace(targets, edit_input=lambda layer, x: mix_at(x, t[layer], alpha[layer], position)):
        yield {}
