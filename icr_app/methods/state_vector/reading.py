"""Reading state vectors off few-shot prompts, and the optimisations that refine them (no model in the latter).

A state here is what every layer's attention heads output (the input of its output projection, all heads side
by side: (L, H·d_h)) at a separator token: the last token before a demonstration's answer, or the query's last
token. A prompt of k demonstrations and a dummy query gives k + 1 states in order, the trajectory the paper
reads as the steps of an optimiser: the state after each example seen.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from icr_app.core.capture import head_outputs
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import Template
from icr_app.core.scoring import pad_left, prefill
from icr_app.core.tasks import Example
from icr_app.core.trace import Trace


@dataclass(frozen=True)
class Shown:
    """A few-shot prompt's token ids (special tokens added, as the runners add them) and its separators: one
    position per demonstration, then the query's (the last token)."""

    ids: list[int]
    positions: list[int]


def shown(lm: LoadedModel, template: Template, demos: list[Example], query: str) -> Shown:
    """`template.few_shot(demos, query)` tokenised, with each demonstration's separator: the last token that ends
    before its answer begins (found by character offsets, so it holds for either prompt format and any merge)."""
    text = template.few_shot(demos, query)
    enc = lm.tokenizer(text, add_special_tokens=True, return_offsets_mapping=True)
    spans = [tuple(o) for o in enc["offset_mapping"]]
    positions, at = [], 0
    for d in demos:
        at = text.index(template.query_text(d.input), at) + len(template.query_text(d.input))
        at = text.index(template.answer_text(d.output) + template.answer_end, at)  # where its answer begins
        positions.append(max(i for i, (start, end) in enumerate(spans) if start < end <= at))
    return Shown(list(enc["input_ids"]), [*positions, len(spans) - 1])


@torch.no_grad()
def separator_states(lm: LoadedModel, prompts: list[Shown], batch_size: int = 4, progress: Progress = no_progress,
                     desc: str = "state vector: prompts") -> torch.Tensor:
    """(k + 1, L, H·d_h) fp32 on the CPU: the heads' outputs at each separator, averaged over `prompts` position
    by position (every prompt has the same k demonstrations' worth of separators)."""
    targets = head_outputs(lm)
    total = torch.zeros(0)
    batches = [prompts[s: s + batch_size] for s in range(0, len(prompts), batch_size)]
    for batch in progress(batches, desc=desc):
        enc = pad_left(lm, [p.ids for p in batch])
        width = enc.input_ids.shape[1]
        rows = torch.arange(len(batch))[:, None]
        cols = torch.tensor([[width - len(p.ids) + i for i in p.positions] for p in batch])  # left padding
        with lm.lock, Trace(targets, retain_input=True) as trace:
            prefill(lm, enc)
        states = torch.stack([trace[layer].hidden_in[rows.to(trace[layer].hidden_in.device),
                                                     cols.to(trace[layer].hidden_in.device)].float().cpu()
                              for layer in targets], dim=2)  # (B, k + 1, L, width)
        total = states.sum(0) if total.numel() == 0 else total + states.sum(0)
    return total / len(prompts)


@torch.no_grad()
def written_state(lm: LoadedModel, prompt: Shown, written: torch.Tensor) -> torch.Tensor:
    """(L, H·d_h): the heads' outputs at the query's separator of `prompt` when, in every layer, demonstration r's
    separator carries `written[r]` ((k, L, H·d_h)) in place of its own heads' outputs."""
    at = torch.tensor(prompt.positions[:-1])

    def write(layer: int, x: torch.Tensor) -> torch.Tensor:
        x = x.clone()
        x[0, at.to(x.device)] = written[:, layer].to(x.device, x.dtype)
        return x

    targets = head_outputs(lm)
    with lm.lock, Trace(targets, edit_input=write, retain_input=True) as trace:
        prefill(lm, pad_left(lm, [prompt.ids]))
    return torch.stack([trace[layer].hidden_in[0, -1].float().cpu() for layer in targets])


def inner(trajectory: torch.Tensor, window: int) -> torch.Tensor:
    """Inner optimisation: the uniform mean of the last `window` states of the trajectory (k + 1, ...)."""
    return trajectory[-window:].mean(0)


def momentum(trajectory: torch.Tensor, window: int, steps: int, decay: float, lr: float) -> torch.Tensor:
    """Momentum optimisation: the inner mean moved by `lr` times the decay-weighted mean of the last `steps`
    differences between successive demonstrations' states (the newest weighs most: weights decay^age)."""
    demos = trajectory[:-1]
    grads = (demos[1:] - demos[:-1])[-steps:]
    if len(grads) == 0:  # one demonstration: no step was taken
        return inner(trajectory, window)
    age = torch.arange(len(grads) - 1, -1, -1, dtype=trajectory.dtype)
    weights = (decay ** age).view(-1, *[1] * (trajectory.dim() - 1))
    return inner(trajectory, window) + lr * (weights * grads).sum(0) / weights.sum()
