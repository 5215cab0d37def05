"""SITE stage 2: learn the soft head selection α = sigmoid(θ) on zero-shot prompts (docs/methods/site.md).

SITE only changes the last prompt token, so every earlier position is the same at every step. We run each
training prompt's prefix (all tokens but the last) once, keep its KV cache, and let each step forward (and
backpropagate through) only what follows: the last prompt token, where the embedding is injected, and, for
the whole-answer objective, the answer tokens after it (teacher forcing). That gives the gradients of the full
prompt at a fraction of the cost, which is what fits a CPU budget.

Two objectives (`Objective`):
- "first-token" (the paper's): cross-entropy of the first answer token, over the labels' first tokens for a
  classification task. It cannot tell apart labels that share a first token, and it teaches nothing after the
  first token of a multi-token answer.
- "answer": the log-likelihood of the whole answer, as evaluation scores it. For a classification task, a
  cross-entropy over the labels of what `core.scoring` compares: the first tokens when they are all distinct
  (the same loss as "first-token", at its cost), each label's full scored sequence (its tokens and the
  end-of-answer token) when some share a first token; for an open task, the negative log-likelihood of the
  gold answer's tokens.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F

from icr_app.core.grads import add_grad
from icr_app.core.models import LoadedModel
from icr_app.core.prefix import PrefixPool
from icr_app.core.progress import Progress, no_progress
from icr_app.core.scoring import label_trie
from icr_app.methods.site.inject import inject

Objective = Literal["answer", "first-token"]
STEP_TOKENS_PER_PASS = 256  # tokens after the cached prefix that one backward pass holds activations for


@dataclass
class Examples:
    """Training or validation prompts with what each is trained towards."""

    pool: PrefixPool
    gold: torch.Tensor  # (N,) classification: index into the labels; open: unused
    first: torch.Tensor  # (N,) first-token objective: index into the candidates, or a vocabulary id
    answers: list[tuple[int, ...]]  # open tasks: each gold answer's tokens


@dataclass
class Scorer:
    """The objective, and what it scores against: the labels' first tokens and full scored sequences
    (classification), or nothing but the gold answers (open)."""

    objective: Objective
    candidates: torch.Tensor | None  # (C,) the labels' first tokens, None for open tasks
    label_seqs: list[tuple[int, ...]] | None  # each label's scored sequence, None for open tasks

    @property
    def first_tokens_decide(self) -> bool:
        """Evaluation compares the labels by their first tokens alone when those are all distinct."""
        return self.candidates is not None and len(set(self.candidates.tolist())) == len(self.candidates)

    @functools.cached_property
    def trie_steps(self) -> int:
        """Tokens one row runs after its cached prefix under the label-sequence objective: the last prompt token
        and the labels' trie."""
        return 1 + len(label_trie(tuple(self.label_seqs)).tokens)

    def passes(self, ex: Examples, rows: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """`rows` split so that each pass runs at most STEP_TOKENS_PER_PASS tokens after the cached prefixes. A
        backward pass keeps every layer's activations of every token it ran: 30 labels' trie is ~90 tokens per
        row, ~130 MB of them per row on the default model, so a batch of 8 at once would take 1 GB."""
        if self.objective == "first-token" or self.first_tokens_decide:
            per_row = 1
        elif self.label_seqs is not None:
            per_row = self.trie_steps
        else:
            per_row = max(len(ex.answers[int(r)]) for r in rows)
        return rows.split(max(1, STEP_TOKENS_PER_PASS // per_row))

    def loss(self, ex: Examples, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean loss over `rows` and, per row, whether the answer was right (first token, label, or every
        answer token under teacher forcing)."""
        if self.objective == "first-token" or self.first_tokens_decide:
            logits = ex.pool.last_logits(rows)
            if self.candidates is not None:
                logits = logits[:, self.candidates]
            target = ex.first[rows]
            return F.cross_entropy(logits, target), logits.argmax(-1) == target
        if self.label_seqs is not None:
            scores = ex.pool.label_logprobs(rows, tuple(self.label_seqs))
            target = ex.gold[rows]
            return F.cross_entropy(scores, target), scores.argmax(-1) == target
        logp, greedy = ex.pool.sequence_logprobs(rows, [[ex.answers[int(r)]] for r in rows])
        return -logp[:, 0].mean(), greedy[:, 0]


@dataclass
class TrainStats:
    steps: int
    best_step: int
    train_loss: float
    val_loss: float
    val_accuracy: float


def accumulate_grad(lm: LoadedModel, t: torch.Tensor, theta: torch.Tensor, scorer: Scorer, ex: Examples,
                    rows: torch.Tensor) -> float:
    """The mean loss over `rows` with α = sigmoid(θ) injected; its gradient is added to θ.grad pass by pass
    (`Scorer.passes`), each pass weighted by its share of the rows."""
    loss = 0.0
    for part in scorer.passes(ex, rows):
        with lm.lock, inject(lm, t, torch.sigmoid(theta), position=0):
            part_loss, _ = scorer.loss(ex, part)
        add_grad(part_loss * (len(part) / len(rows)), [theta])
        loss += float(part_loss.detach()) * len(part) / len(rows)
    return loss


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

    def val_loss() -> tuple[float, float]:
        # Injected at step position 0: the last prompt token, wherever answer tokens follow it.
        with torch.no_grad(), lm.lock, inject(lm, t, torch.sigmoid(theta), position=0):
            rows = torch.arange(len(val.pool), device=lm.device)
            losses, hits = [], []
            for chunk in rows.split(batch_size):  # a training batch's memory: many labels mean wide logits
                loss, hit = scorer.loss(val, chunk)
                losses.append(loss * len(chunk))
                hits.append(hit)
            return float(sum(losses) / len(val.pool)), float(torch.cat(hits).float().mean())

    best_loss, best_acc = val_loss()
    best_theta, best_step, since_best, losses, step = theta.detach().clone(), 0, 0, [], 0
    for step in progress(range(1, steps + 1), desc="SITE: head selection"):
        rows = torch.randperm(len(train.pool), generator=gen)[:batch_size].to(lm.device)
        opt.zero_grad()
        losses.append(accumulate_grad(lm, t, theta, scorer, train, rows))
        opt.step()
        if step % eval_every and step != steps:
            continue
        vl, acc = val_loss()
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
