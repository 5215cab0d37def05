"""Attention isolation: cut the label words off from the text before them, in the first or last K layers.

If shallow layers aggregate the demonstrations into the label words, blocking that aggregation early
should change the model's answers far more than blocking it late, and far more than blocking as many
random non-label tokens (the control). The block is an additive -inf on the attention logits of rows
`p` to columns `j < p`, applied on top of the usual mask, then plain SDPA.
"""

from __future__ import annotations

import random
from contextlib import nullcontext
from dataclasses import asdict, dataclass

import torch
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from icr_app.analyses.anchors.prompt import AnchorPrompt, first_label_ids
from icr_app.core.attention import additive_mask
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.scoring import Intervention, encode, prefill


def isolate(rows: list[list[int]], lengths: list[int], layers: set[int]) -> Intervention:
    """The intervention: in `layers`, token `p` of prompt `b` (for p in rows[b]) sees no earlier token.

    Positions are within each unpadded prompt; the batch is left-padded, so row b is shifted by
    T - lengths[b] when the mask is built.
    """

    def isolating_attention(module, query, key, value, attention_mask, **kw):
        if module.layer_idx in layers:
            attention_mask = additive_mask(attention_mask, query, key).expand(query.shape[0], -1, -1, -1)
            b, _, t, s = attention_mask.shape
            block = torch.zeros(b, 1, t, s, dtype=torch.bool, device=attention_mask.device)
            for i, (ps, n) in enumerate(zip(rows, lengths)):
                for p in ps:
                    row = t - n + p
                    block[i, 0, row, s - n: s - t + row] = True
            attention_mask = attention_mask.masked_fill(block, torch.finfo(attention_mask.dtype).min)
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kw)

    return nullcontext({"attention_edit": isolating_attention})


def random_rows(prompts: list[AnchorPrompt], seed: int) -> list[list[int]]:
    """The control: as many random positions as each prompt has label tokens, none a label, first or final."""
    rng = random.Random(seed)
    out = []
    for p in prompts:
        pool = sorted(set(range(1, p.target)) - set(p.label_positions))
        out.append(sorted(rng.sample(pool, min(len(pool), len(p.label_positions)))))
    return out


@torch.no_grad()
def predict(lm: LoadedModel, prompts: list[AnchorPrompt], label_ids: torch.Tensor, rows: list[list[int]] | None,
            layers: set[int], batch_size: int) -> list[int]:
    """Predicted label indices (first-token argmax) with the given isolation active during the prefill."""
    preds: list[int] = []
    for s in range(0, len(prompts), batch_size):
        batch = prompts[s: s + batch_size]
        enc = encode(lm, [p.text for p in batch])
        lengths = [len(p) for p in batch]
        logits = prefill(lm, enc, intervention=isolate(rows[s: s + batch_size] if rows else [[]] * len(batch),
                                                       lengths, layers))
        preds += logits[:, label_ids].argmax(-1).tolist()
    return preds


@dataclass
class IsolationRow:
    condition: str
    layers: str
    loyalty: float
    accuracy: float


def isolation_experiment(
    lm: LoadedModel, prompts: list[AnchorPrompt], labels: list[str], k: int = 5, seed: int = 0,
    batch_size: int = 8, progress: Progress = no_progress,
) -> list[IsolationRow]:
    """Loyalty (agreement with the unmodified model) and accuracy for label vs random isolation, first/last K."""
    label_ids = first_label_ids(lm, labels, prompts[0].template)
    gold = [labels.index(p.query.output) for p in prompts]
    label_rows = [p.label_positions for p in prompts]
    control = random_rows(prompts, seed)
    first, last = set(range(k)), set(range(lm.n_layers - k, lm.n_layers))
    conditions = [("none", "-", None, set()), ("label words", f"first {k}", label_rows, first),
                  ("label words", f"last {k}", label_rows, last), ("random tokens", f"first {k}", control, first),
                  ("random tokens", f"last {k}", control, last)]
    base: list[int] = []
    out = []
    for name, where, rows, layers in progress(conditions):
        preds = predict(lm, prompts, label_ids, rows, layers, batch_size)
        base = base or preds
        n = len(preds)
        out.append(IsolationRow(
            name, where, sum(a == b for a, b in zip(preds, base)) / n, sum(a == g for a, g in zip(preds, gold)) / n,
        ))
    return out


def rows_to_json(rows: list[IsolationRow]) -> list[dict]:
    return [asdict(r) for r in rows]
