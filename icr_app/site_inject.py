"""SITE's intervention: mix task embeddings into each head's output at the last prompt token.

`o[l, h] ← (1 − α[l, h])·o[l, h] + α[l, h]·t[l, h]` on the o_proj input (heads contiguous). Batches
are left-padded, so position −1 is every row's last real token. The edit builds a new tensor (no
in-place writes), so gradients reach α during training; the same hook serves training and inference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch

from icr_app.hooks import hooks, o_proj_modules
from icr_app.models import LoadedModel


def _mix_last(t: torch.Tensor, alpha: torch.Tensor) -> Callable:
    """Pre-hook for one layer: `t` (H, d_h), `alpha` (H,)."""
    a = alpha[:, None]

    def hook(module: torch.nn.Module, args: tuple) -> tuple:
        x = args[0]
        b, _, width = x.shape
        last = x[:, -1].reshape(b, *t.shape)
        mixed = ((1 - a) * last + a * t).to(x.dtype).reshape(b, 1, width)
        return (torch.cat([x[:, :-1], mixed], dim=1), *args[1:])

    return hook


@contextmanager
def inject(lm: LoadedModel, t: torch.Tensor, alpha: torch.Tensor) -> Iterator[None]:
    """Inside the block, every forward of `lm` injects `t` (L, H, d_h) with weights `alpha` (L, H).

    Holds `lm.lock`, so no other request runs the model while the hooks are live; the hooks are
    removed on exit, exceptions included.
    """
    t, alpha = t.to(lm.device), alpha.to(lm.device)
    with lm.lock, hooks(pre=[(m, _mix_last(t[i], alpha[i])) for i, m in enumerate(o_proj_modules(lm))]):
        yield
