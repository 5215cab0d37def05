"""Reading hidden states off the model: the mean, over prompts, of what chosen modules see or return at the
last token. Task embeddings, task vectors, function vectors, context vectors and ICV all start here.

Batches are left-padded, so position −1 is every row's last real token.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import torch
from torch import nn

from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.scoring import encode, prefill
from icr_app.core.trace import Trace, main_tensor


@torch.no_grad()
def last_token_states(lm: LoadedModel, prompts: list[str], targets: Mapping[Any, nn.Module],
                      read: Literal["input", "output"] = "output", batch_size: int = 8,
                      progress: Progress = no_progress, desc: str = "reading hidden states") -> dict:
    """{key: (N, d)} in fp32 on the CPU: each target's input or output at each prompt's last token, in order."""
    rows: dict = {key: [] for key in targets}
    batches = [prompts[s: s + batch_size] for s in range(0, len(prompts), batch_size)]
    for batch in progress(batches, desc=desc):
        with lm.lock, Trace(targets, retain_input=read == "input", retain_output=read == "output") as trace:
            prefill(lm, encode(lm, batch))
        for key in targets:
            x = trace[key].hidden_in if read == "input" else main_tensor(trace[key].output)
            rows[key].append(x[:, -1].float().cpu())
    return {key: torch.cat(parts) for key, parts in rows.items()}


def last_token_means(lm: LoadedModel, prompts: list[str], targets: Mapping[Any, nn.Module],
                     read: Literal["input", "output"] = "output", batch_size: int = 8,
                     progress: Progress = no_progress, desc: str = "reading hidden states") -> dict:
    """{key: (d,)}: the mean over prompts of `last_token_states`."""
    states = last_token_states(lm, sorted(prompts, key=len), targets, read, batch_size, progress, desc)
    return {key: x.mean(0) for key, x in states.items()}


def head_outputs(lm: LoadedModel) -> dict[int, nn.Module]:
    """Each layer's attention output projection, whose input holds the heads' outputs (read="input")."""
    return {layer: lm.adapter.head_out(layer) for layer in range(lm.n_layers)}


def blocks(lm: LoadedModel) -> dict[int, nn.Module]:
    """Each decoder block, whose output is the residual stream after it (read="output")."""
    return dict(enumerate(lm.adapter.blocks))
