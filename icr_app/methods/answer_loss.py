"""What a method trained on zero-shot prompts learns towards: the loss of the gold answer after each prompt.

SITE and the learned task vector change only the prompt's last token, so every earlier position is the same at
every step: each training prompt's prefix (all tokens but the last) runs once into a cache (`core.prefix`), and
a step forwards (and backpropagates through) only what follows: the last prompt token, where the method
intervenes (position 0 of the step), and, for the whole-answer objective, the answer tokens after it (teacher
forcing).

Two objectives (`Objective`):
- "first-token": cross-entropy of the first answer token, over the labels' first tokens for a classification
  task. It cannot tell apart labels that share a first token, and it teaches nothing after the first token of
  a multi-token answer.
- "answer": the log-likelihood of the whole answer, as evaluation scores it. For a classification task, a
  cross-entropy over the labels of what `core.scoring` compares: the first tokens when they are all distinct
  (the same loss as "first-token", at its cost), each label's full scored sequence (its tokens and the
  end-of-answer token) when some share a first token; for an open task, the negative log-likelihood of the
  gold answer's tokens.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F

from icr_app.core.grads import add_grad
from icr_app.core.models import LoadedModel
from icr_app.core.prefix import PrefixPool
from icr_app.core.scoring import Intervention, label_trie
from icr_app.core.tasks import Example
from icr_app.methods.base import Method

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
        assert self.label_seqs is not None, "only a classification task has the label-sequence objective"
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


def prompt_examples(lm: LoadedModel, method: Method, examples: list[Example]) -> Examples:
    """`examples` as `method`'s prompts, their prefixes cached, with the gold label or answer tokens of each."""
    pool = PrefixPool(lm, [method.prompt(e.input) for e in examples])
    if method.label_set is not None:
        gold = torch.tensor([method.labels.index(e.output) for e in examples], device=lm.device)
        return Examples(pool, gold, gold, [])
    answer = method.template.answer_text
    answers = [tuple(lm.tokenizer(answer(e.output), add_special_tokens=False)["input_ids"]) for e in examples]
    first = torch.tensor([a[0] for a in answers], device=lm.device)
    return Examples(pool, torch.zeros_like(first), first, answers)


def scorer_for(lm: LoadedModel, method: Method, objective: Objective) -> Scorer:
    """The `objective` over `method`'s label set (classification) or its gold answers (open)."""
    ls = method.label_set
    return Scorer(objective, None if ls is None else torch.tensor(ls.first_ids, device=lm.device),
                  None if ls is None else list(ls.scored_ids))


Change = Callable[[], Intervention]
"""A new intervention for each pass: the method's change at step position 0 (the last prompt token)."""


def accumulate_grad(scorer: Scorer, ex: Examples, rows: torch.Tensor, change: Change,
                    params: Sequence[torch.Tensor]) -> float:
    """The mean loss over `rows` with `change` live; its gradient is added to `params`' `.grad` pass by pass
    (`Scorer.passes`), each pass weighted by its share of the rows."""
    lm, loss = ex.pool.lm, 0.0
    for part in scorer.passes(ex, rows):
        with lm.lock, change():
            part_loss, _ = scorer.loss(ex, part)
        add_grad(part_loss * (len(part) / len(rows)), params)
        loss += float(part_loss.detach()) * len(part) / len(rows)
    return loss


@torch.no_grad()
def held_out(scorer: Scorer, ex: Examples, change: Change, batch_size: int) -> tuple[float, float]:
    """(mean loss, accuracy) over every prompt of `ex` with `change` live, `batch_size` rows at a time (a
    training batch's memory: many labels mean wide logits)."""
    lm = ex.pool.lm
    losses, hits = [], []
    with lm.lock, change():
        for chunk in torch.arange(len(ex.pool), device=lm.device).split(batch_size):
            loss, hit = scorer.loss(ex, chunk)
            losses.append(loss * len(chunk))
            hits.append(hit)
    return float(sum(losses) / len(ex.pool)), float(torch.cat(hits).float().mean())
