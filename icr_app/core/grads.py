"""Gradients of a method's own parameters only.

A model the user wrapped keeps its parameters' `requires_grad` (`core.models.wrap`), so `loss.backward()` would
also compute, and leave in `.grad`, the gradient of every weight of their model. Training in ICL Lab asks for
the gradients of the parameters it trains and of nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def add_grad(loss: torch.Tensor, params: Sequence[torch.Tensor]) -> None:
    """`loss.backward()` restricted to `params`: their gradients are added to their `.grad`."""
    for p, g in zip(params, torch.autograd.grad(loss, list(params))):
        p.grad = g if p.grad is None else p.grad + g
