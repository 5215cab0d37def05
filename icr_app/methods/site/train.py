"""SITE stage 2: learn the soft head selection α = sigmoid(θ) on zero-shot prompts (DESIGN.md §1).

SITE only changes the last prompt token, and the loss reads only that token's logits, so every
earlier position is the same at every step. We therefore run each training prompt's prefix once,
keep its KV cache, and let each step forward (and backpropagate through) the last token alone: the
same gradients as the full prompt at a fraction of the cost, which is what fits a CPU budget.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from transformers import DynamicCache

from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.scoring import pad_left
from icr_app.methods.site.inject import inject


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
        kv_shape = (len(ids), lm.n_kv_heads, width, lm.head_dim)
        for _ in range(lm.n_layers):
            self.keys.append(torch.zeros(kv_shape, device=lm.device))
            self.values.append(torch.zeros(kv_shape, device=lm.device))
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
        # A sliding-window layer keeps only its last window − 1 positions; the older columns stay zero, and a
        # cache rebuilt from these full-width tensors trims them again and masks by the true length.
        for layer, k, v in zip(cache.layers, self.keys, self.values):
            n = layer.keys.shape[2]
            k[rows, :, -n:] = layer.keys.float()
            v[rows, :, -n:] = layer.values.float()

    def __len__(self) -> int:
        return len(self.last)

    def last_logits(self, rows: torch.Tensor) -> torch.Tensor:
        """Next-token logits (B, V) after the full prompts of `rows`, computed from their cached prefixes."""
        m = int(self.prefix_len[rows].max())
        data = [(k[rows, :, -m:], v[rows, :, -m:]) for k, v in zip(self.keys, self.values)] if m > 0 else None
        cache = DynamicCache(ddp_cache_data=data, config=self.lm.model.config)
        mask = torch.cat([self.mask[rows, self.mask.shape[1] - m:], torch.ones_like(rows)[:, None]], 1)
        out = self.lm.model(input_ids=self.last[rows, None], attention_mask=mask,
                            position_ids=self.prefix_len[rows, None], cache=cache, use_cache=True)
        return out.logits[:, -1, :].float()


@dataclass
class TrainStats:
    steps: int
    best_step: int
    train_loss: float
    val_loss: float
    val_accuracy: float


def first_token_loss(logits: torch.Tensor, targets: torch.Tensor, candidates: torch.Tensor | None,
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """Cross-entropy of the first answer token (over the labels' first tokens when given), and hits."""
    if candidates is not None:
        logits = logits[:, candidates]
    return F.cross_entropy(logits, targets), logits.argmax(-1) == targets


def train_theta(
    lm: LoadedModel,
    t: torch.Tensor,
    train: PrefixPool,
    train_targets: torch.Tensor,
    val: PrefixPool,
    val_targets: torch.Tensor,
    candidates: torch.Tensor | None,
    steps: int,
    batch_size: int,
    lr: float,
    eval_every: int,
    patience: int,
    seed: int,
    progress: Progress = no_progress,
) -> tuple[torch.Tensor, TrainStats]:
    """Adam on θ only (model frozen); keeps the θ with the lowest held-out loss, stops after `patience` evals
    without improvement. Targets index the candidate list when `candidates` is given, else the vocabulary."""
    theta = torch.zeros(lm.n_layers, lm.n_heads, device=lm.device, requires_grad=True)
    opt = torch.optim.Adam([theta], lr=lr)
    gen = torch.Generator().manual_seed(seed)

    def val_loss() -> tuple[float, float]:
        with torch.no_grad(), lm.lock, inject(lm, t, torch.sigmoid(theta)):
            rows = torch.arange(len(val), device=lm.device)
            losses, hits = [], []
            for chunk in rows.split(max(batch_size, 32)):
                loss, hit = first_token_loss(val.last_logits(chunk), val_targets[chunk], candidates)
                losses.append(loss * len(chunk))
                hits.append(hit)
            return float(sum(losses) / len(val)), float(torch.cat(hits).float().mean())

    best_loss, best_acc = val_loss()
    best_theta, best_step, since_best, losses, step = theta.detach().clone(), 0, 0, [], 0
    for step in progress(range(1, steps + 1)):
        rows = torch.randperm(len(train), generator=gen)[:batch_size].to(lm.device)
        with lm.lock, inject(lm, t, torch.sigmoid(theta)):
            logits = train.last_logits(rows)
        loss, _ = first_token_loss(logits, train_targets[rows], candidates)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
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
