"""Gradients of a method's own parameters only.

A model the user wrapped keeps its parameters' `requires_grad` (`core.models.wrap`), so `loss.backward()` would
also compute, and leave in `.grad`, the gradient of every weight of their model. Training in ICL Lab asks for
the gradients of the parameters it trains and of nothing else: `add_grad`, or, where the backward pass must stay
`backward()` (accelerate's, whose multi-process gradient averaging hooks into it), a forward pass run `frozen`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import torch
from torch import nn


def add_grad(loss: torch.Tensor, params: Sequence[torch.Tensor]) -> None:
    """`loss.backward()` restricted to `params`: their gradients are added to their `.grad`."""
    for p, g in zip(params, torch.autograd.grad(loss, list(params))):
        p.grad = g if p.grad is None else p.grad + g


@contextmanager
def frozen(model: nn.Module) -> Iterator[None]:
    """The model's parameters out of autograd for the block: a graph built inside reaches none of them, so a
    backward pass through it computes no gradient of theirs. Their `requires_grad` is given back on exit."""
    trainable = [p for p in model.parameters() if p.requires_grad]
    for p in trainable:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p in trainable:
            p.requires_grad_(True)
