"""Anchor re-weighting: learn how much the final position should read each demonstration's label word.

A learnable `β[l, h, k]` (init 0) multiplies the post-softmax attention of the final position to the
label word of demonstration k by `exp(β)`, with no renormalisation (icr_app/analyses/anchors/README.md). Only the final
row changes, so the demonstrations are run once into a cache and only the queries are trained on and
scored against it. Paper's recipe: one demonstration per class, four training examples per class,
Adam lr 0.01, 10 epochs (batch 1 here).
"""

from __future__ import annotations

import random
from collections import defaultdict
from contextlib import nullcontext
from dataclasses import asdict, dataclass

import torch

from icr_app.analyses.anchors.prefix import DemoCache, answer_logits, demo_cache, shared_prefix
from icr_app.analyses.anchors.prompt import AnchorPrompt, build_prompt, first_label_ids, label_loss
from icr_app.core.attention import attend, attention_weights
from icr_app.core.grads import add_grad
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import Template
from icr_app.core.scoring import Intervention
from icr_app.core.tasks import Example, Task


def reweighted(lm: LoadedModel, beta: torch.Tensor, label_tokens: tuple[tuple[int, ...], ...],
               prefix_len: int) -> Intervention:
    """The intervention: scale A(final, label tokens of demo k) by exp(β[l, :, k]) in every layer.

    Positions are those of the full prompt, whose demonstrations (`prefix_len` tokens) sit in the cache. A
    sliding-window layer's keys are only its last columns, so there the positions shift, and label words that
    fell out of its window are not read at all (nothing to re-weight).
    """
    cols = torch.tensor([p for toks in label_tokens for p in toks], device=lm.device)
    demo_of = torch.tensor([k for k, toks in enumerate(label_tokens) for _ in toks], device=lm.device)

    def reweighting_attention(module, query, key, value, attention_mask, scaling=None, **_):
        # In fp32 on the layer's device whatever the model's dtype and map: β trains in fp32 through these weights.
        dev = query.device
        weights = attention_weights(query.float(), key.float(), attention_mask, scaling)
        shifted = cols.to(dev) - (prefix_len + query.shape[2] - key.shape[2])
        seen = shifted >= 0
        factor = torch.ones(weights.shape[1], weights.shape[-1], dtype=weights.dtype, device=dev)
        scale = beta[module.layer_idx].to(dev)[:, demo_of.to(dev)[seen]].exp()
        factor = factor.index_copy(1, shifted[seen], scale)
        last = weights[:, :, -1:] * factor[None, :, None, :]
        return attend(torch.cat([weights[:, :, :-1], last], 2), value.float()).to(query.dtype), None

    return nullcontext({"attention_edit": reweighting_attention})


def training_examples(train: Task, demos: list[Example], per_class: int, seed: int) -> list[Example]:
    """per_class examples of each label, none of them a demonstration."""
    by_label: dict[str, list[Example]] = defaultdict(list)
    for e in train.examples:
        if e not in demos:
            by_label[e.output].append(e)
    rng = random.Random(seed)
    return [e for lab in train.labels for e in rng.sample(by_label[lab], min(per_class, len(by_label[lab])))]


@dataclass
class ReweightResult:
    task: str
    model: str
    n_test: int
    n_train: int
    accuracy_before: float
    accuracy_after: float
    beta_abs_mean: float
    losses: list[float]  # mean training loss per epoch

    def to_json(self) -> dict:
        return asdict(self)


def accuracy(lm: LoadedModel, demos: DemoCache, prompts: list[AnchorPrompt], labels: list[str],
             beta: torch.Tensor | None, batch_size: int) -> float:
    label_ids = first_label_ids(lm, labels, prompts[0].template)
    correct = 0
    with torch.no_grad():
        for s in range(0, len(prompts), batch_size):
            b = prompts[s: s + batch_size]
            ctx = reweighted(lm, beta, b[0].label_tokens, demos.prefix_len) if beta is not None else None
            preds = answer_logits(lm, demos, b, ctx)[:, label_ids].argmax(-1).tolist()
            correct += sum(labels[i] == p.query.output for i, p in zip(preds, b))
    return correct / len(prompts)


def reweight_experiment(
    lm: LoadedModel, task: Task, train: Task, test_prompts: list[AnchorPrompt], template: Template, per_class: int = 4,
    epochs: int = 10, lr: float = 0.01, seed: int = 0, batch_size: int = 16, progress: Progress = no_progress,
) -> ReweightResult:
    """Accuracy on the held-out prompts with the same demonstrations, before and after learning β."""
    shown = list(test_prompts[0].demos)
    train_prompts = [build_prompt(lm, shown, q, template) for q in training_examples(train, shown, per_class, seed)]
    demos = demo_cache(lm, shared_prefix(test_prompts + train_prompts))
    label_ids = first_label_ids(lm, task.labels, template)
    before = accuracy(lm, demos, test_prompts, task.labels, None, batch_size)
    beta = torch.zeros(lm.n_layers, lm.n_heads, len(shown), device=lm.device, requires_grad=True)
    opt = torch.optim.Adam([beta], lr=lr)
    rng = random.Random(seed)
    losses = []
    for _ in progress(range(epochs)):
        order = list(range(len(train_prompts)))
        rng.shuffle(order)
        total = 0.0
        for i in order:
            p = train_prompts[i]
            gold = torch.tensor([task.labels.index(p.query.output)], device=lm.device)
            with torch.enable_grad():
                logits = answer_logits(lm, demos, [p], reweighted(lm, beta, p.label_tokens, demos.prefix_len))
                loss = label_loss(logits, label_ids, gold)
                opt.zero_grad()
                add_grad(loss, [beta])
            opt.step()
            total += loss.item()
        losses.append(total / len(order))
    after = accuracy(lm, demos, test_prompts, task.labels, beta.detach(), batch_size)
    return ReweightResult(task.name, lm.name, len(test_prompts), len(train_prompts), before, after,
                          beta.detach().abs().mean().item(), losses)
