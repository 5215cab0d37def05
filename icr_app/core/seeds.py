"""Seeding torch's global generators for one block of work and giving the caller's state back after it.

Code that draws from the global generators (a module's default init, dropout masks, peft's LoRA init) cannot take
a generator of its own. A fresh process seeds them at random, so such code is seeded here for reproducible builds;
and a library must not move its caller's generators, so their state is restored when the block ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


@contextmanager
def seeded(seed: int, model: torch.nn.Module | None = None) -> Iterator[None]:
    """The CPU generator (and the CUDA generators of the GPUs `model` sits on) seeded for the block, then as
    they were before it."""
    gpus = sorted({p.device.index or 0 for p in model.parameters() if p.device.type == "cuda"}) if model else []
    with torch.random.fork_rng(devices=gpus):
        torch.manual_seed(seed)
        yield
