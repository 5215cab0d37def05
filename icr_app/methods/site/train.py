"""SITE stage 2: learn the soft head selection α = sigmoid(θ) on zero-shot prompts (DESIGN.md §1).

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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from transformers import DynamicCache

from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.scoring import fits_every_window, label_trie, pad_left, token_logprobs
from icr_app.methods.site.inject import inject

Objective = Literal["answer", "first-token"]
STEP_TOKENS_PER_PASS = 256  # tokens after the cached prefix that one backward pass holds activations for


class PrefixPool:
    """Prompts split into a cached prefix (all tokens but the last) and the last token, left-padded."""

    def __init__(self, lm: LoadedModel, prompts: list[str], batch_size: int = 16) -> None:
        self.lm = lm
        ids = [lm.tokenizer(p, add_special_tokens=True)["input_ids"] for p in prompts]
        self.last = torch.tensor([x[-1] for x in ids], device=lm.device)
        self.prefix_len = torch.tensor([len(x) - 1 for x in ids], device=lm.device)
        width = int(self.prefix_len.max())
        self.mask = (torch.arange(width, device=lm.device)[None, :] >= width - self.prefix_len[:, None]).long()
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []
        if width == 0:
            return
        self.kv_shape = (len(ids), lm.n_kv_heads, width, lm.head_dim)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for s in range(0, len(order), batch_size):
            self._fill(order[s: s + batch_size], [ids[i][:-1] for i in order[s: s + batch_size]])

    @torch.no_grad()
    def _fill(self, rows: list[int], prefixes: list[list[int]]) -> None:
        w = max(len(p) for p in prefixes)
        if w == 0:
            return
        enc = pad_left(self.lm, prefixes)
        cache = DynamicCache(config=self.lm.model.config)
        with self.lm.lock:
            self.lm.model(input_ids=enc.input_ids, attention_mask=enc.attention_mask, position_ids=enc.position_ids,
                          cache=cache, use_cache=True, logits_to_keep=1)
        if not self.keys:  # in each layer's own dtype and device (a model spread over devices keeps its cache so)
            self.keys = [layer.keys.new_zeros(self.kv_shape) for layer in cache.layers]
            self.values = [layer.values.new_zeros(self.kv_shape) for layer in cache.layers]
        # A sliding-window layer keeps only its last window − 1 positions; the older columns stay zero, and a
        # cache rebuilt from these full-width tensors trims them again and masks by the true length.
        for layer, k, v in zip(cache.layers, self.keys, self.values):
            n = layer.keys.shape[2]
            k[rows, :, -n:] = layer.keys
            v[rows, :, -n:] = layer.values

    def __len__(self) -> int:
        return len(self.last)

    def _run(self, rows: torch.Tensor, steps: torch.Tensor, step_mask: torch.Tensor,
             offsets: torch.Tensor | None = None) -> torch.Tensor:
        """Final hidden states (R, S, D) of `steps` (R, S) after the cached prefixes of `rows` (R,), which may repeat.

        `step_mask` is (R, S), which steps are real (each sees the prefix and the real steps before it), or
        (S, S), which steps each step sees (a tree of continuations); `offsets` (S,) are the steps' positions
        after the prompt's last prefix token (default 0, 1, 2, ...)."""
        m = int(self.prefix_len[rows].max())
        data = [(k[rows.to(k.device), :, -m:], v[rows.to(v.device), :, -m:])  # each layer's device
                for k, v in zip(self.keys, self.values)] if m > 0 else None
        cache = DynamicCache(ddp_cache_data=data, config=self.lm.model.config)
        prefix = self.mask[rows, self.mask.shape[1] - m:]
        if offsets is None:
            offsets = torch.arange(steps.shape[1], device=steps.device)
            mask = torch.cat([prefix, step_mask], 1)
        else:  # given whole as a 4D additive mask, which transformers uses as it is
            r, s = steps.shape
            seen = torch.cat([prefix.bool()[:, None, None, :].expand(r, 1, s, m),
                              step_mask[None, None].expand(r, 1, s, s)], -1)
            dtype = self.lm.model.dtype
            mask = torch.zeros(seen.shape, dtype=dtype, device=steps.device).masked_fill(~seen, torch.finfo(dtype).min)
        pos = self.prefix_len[rows, None] + offsets[None, :]
        return self.lm.adapter.body(input_ids=steps, attention_mask=mask, position_ids=pos, cache=cache,
                                    use_cache=True).last_hidden_state

    def label_logprobs(self, rows: torch.Tensor, seqs: tuple[tuple[int, ...], ...]) -> torch.Tensor:
        """Σ log p(label sequence | prompt) (R, K) for the same K label sequences after every row: the last
        prompt token and the labels' prefix trie (`core.scoring.label_trie`) run once per row, so labels that
        share a prefix share its tokens and no row is repeated per label. A sliding-window layer keeps only
        its last window − 1 keys, which a tree mask cannot address, so when prompt and trie do not fit in
        every window each label runs on its own copy of the row (`sequence_logprobs`)."""
        trie = label_trie(seqs)
        width = int(self.prefix_len[rows].max()) + 1 + len(trie.tokens)
        if not fits_every_window(self.lm, width):
            return self.sequence_logprobs(rows, [seqs] * len(rows))[0]
        dev, n = self.last.device, len(trie.tokens)
        steps = torch.cat([self.last[rows, None], torch.tensor(trie.tokens, dtype=torch.long, device=dev)
                           [None].expand(len(rows), n)], 1)
        sees = torch.eye(n + 1, dtype=torch.bool, device=dev)
        sees[1:, 0] = True  # every trie node follows the last prompt token
        sees[1:, 1:] = trie.visible.to(dev)
        offsets = torch.tensor([0, *(d + 1 for d in trie.depth)], device=dev)
        hidden = self._run(rows, steps, sees, offsets)  # (R, 1 + N, D)
        # each label's first token at step 0 (the last prompt token), then its trie steps
        k = len(seqs)
        positions = torch.cat([torch.zeros(k, dtype=torch.long, device=dev), trie.step_node.to(dev) + 1])
        tokens = torch.tensor([t[0] for t in seqs] + trie.step_token.tolist(), device=dev)
        labels = torch.cat([torch.arange(k, device=dev), trie.step_label.to(dev)])
        lp, _ = token_logprobs(self.lm, hidden, positions, tokens)
        return hidden.new_zeros(len(rows), k, dtype=lp.dtype).index_add(1, labels, lp)

    def last_logits(self, rows: torch.Tensor) -> torch.Tensor:
        """Next-token logits (B, V) after the full prompts of `rows`, computed from their cached prefixes."""
        hidden = self._run(rows, self.last[rows, None], torch.ones_like(rows)[:, None])
        return self.lm.adapter.logits(hidden[:, -1]).float()

    def sequence_logprobs(self, rows: torch.Tensor, seqs: Sequence[Sequence[tuple[int, ...]]],
                          ) -> tuple[torch.Tensor, torch.Tensor]:
        """Σ log p(sequence | prompt) (B, K) for K answer sequences per row (teacher forcing), and whether greedy
        decoding under teacher forcing gets every token of it, (B, K). One pass: each (row, sequence) runs the
        last prompt token and the sequence's tokens but its last, right-padded."""
        k = len(seqs[0])
        flat = [s for per_row in seqs for s in per_row]
        width = max(map(len, flat))
        dev = self.last.device
        steps = torch.full((len(flat), width), int(self.lm.tokenizer.pad_token_id), dtype=torch.long, device=dev)
        targets = torch.zeros_like(steps)
        real = torch.zeros_like(steps, dtype=torch.bool)
        rep = rows.repeat_interleave(k)
        steps[:, 0] = self.last[rep]
        for i, s in enumerate(flat):
            steps[i, 1: len(s)] = torch.tensor(s[:-1], device=dev)
            targets[i, : len(s)] = torch.tensor(s, device=dev)
            real[i, : len(s)] = True
        hidden = self._run(rep, steps, real.long())
        lp, hit = token_logprobs(self.lm, hidden, torch.arange(width, device=dev), targets)
        greedy = (hit | ~real).all(-1)
        return (lp * real).sum(-1).view(len(rows), k), greedy.view(len(rows), k)


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
        (part_loss * (len(part) / len(rows))).backward()
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
