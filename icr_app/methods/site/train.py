"""SITE stage 2: learn the soft head selection α = sigmoid(θ) on zero-shot prompts (icr_app/methods/site/README.md).

SITE only changes the last prompt token, so every earlier position is the same at every step. We run each
training prompt's prefix (all tokens but the last) once, keep its KV cache, and let each step forward (and
backpropagate through) only what follows: the last prompt token, where the embedding is injected, and, for
the whole-answer objective, the answer tokens after it (teacher forcing). That gives the gradients of the full
prompt at a fraction of the cost, which is what fits a CPU budget. The objectives ("first-token", the paper's,
and "answer") are `methods.answer_loss`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.scoring import Intervention
from icr_app.methods.answer_loss import Examples, Scorer, accumulate_grad, held_out
from icr_app.methods.site.inject import inject


@dataclass
class TrainStats:
    steps: int
    best_step: int
    train_loss: float
    val_loss: float
    val_accuracy: float


def train_theta(
    lm: LoadedModel,
    t: torch.Tensor,
    train: Examples,
    val: Examples,
    scorer: Scorer,
    steps: int,
    batch_size: int,
    lr: float,
    eval_every: int,
    patience: int,
    seed: int,
    progress: Progress = no_progress,
) -> tuple[torch.Tensor, TrainStats]:
    """Adam on θ only (model frozen); keeps the θ with the lowest held-out loss, stops after `patience` evals
    without improvement."""
    theta = torch.zeros(lm.n_layers, lm.n_heads, device=lm.device, requires_grad=True)
    opt = torch.optim.Adam([theta], lr=lr)
    gen = torch.Generator().manual_seed(seed)

    def change() -> Intervention:  # at step position 0: the last prompt token, wherever answer tokens follow it
        return inject(lm, t, torch.sigmoid(theta), position=0)

    best_loss, best_acc = held_out(scorer, val, change, batch_size)
    best_theta, best_step, since_best, losses, step = theta.detach().clone(), 0, 0, [], 0
    for step in progress(range(1, steps + 1), desc="SITE: head selection"):
        rows = torch.randperm(len(train.pool), generator=gen)[:batch_size].to(lm.device)
        opt.zero_grad()
        losses.append(accumulate_grad(scorer, train, rows, change, [theta]))
        opt.step()
        if step % eval_every and step != steps:
            continue
        vl, acc = held_out(scorer, val, change, batch_size)
        if vl < best_loss:
            best_loss, best_acc, best_theta, best_step, since_best = vl, acc, theta.detach().clone(), step, 0
        else:
            since_best += 1
            if since_best >= patience:
                break
    last = losses[-eval_every:] or [float("nan")]
    stats = TrainStats(steps=step, best_step=best_step, train_loss=sum(last) / len(last),
                       val_loss=best_loss, val_accuracy=best_acc)
    return best_theta.cpu(), stats
