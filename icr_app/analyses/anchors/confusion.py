"""Anchor confusion diagnosis: classes whose label-word keys look alike to the final query get confused.

At a deep layer, take the final position's query vectors over many prompts, find their top principal
directions per head, and project each class's label-word key (averaged over prompts and label tokens)
onto them. Anchors that are close there are hard for the final position to tell apart; the predicted
confusability `1 - d_ij / max d` is set beside the measured confusion matrix of the same prompts.
Q and K are taken before RoPE (the q_proj / k_proj outputs): after RoPE they carry positions, which
differ between prompts and between a label word and the final token.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch

from icr_app.analyses.anchors.prompt import AnchorPrompt, first_label_ids
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.scoring import encode, prefill


@dataclass
class ConfusionResult:
    task: str
    model: str
    layer: int
    rank: int
    n: int
    labels: list[str]
    predicted: list[list[float]]  # 1 - normalised anchor distance; diagonal 1
    confusion: list[list[int]]  # rows gold, columns predicted
    accuracy: float
    correlation: float | None  # Pearson, predicted vs measured pair confusion rate, over label pairs

    def to_json(self) -> dict:
        return asdict(self)


@torch.no_grad()
def capture(
    lm: LoadedModel, prompts: list[AnchorPrompt], labels: list[str], layer: int, batch_size: int, progress: Progress
) -> tuple[torch.Tensor, torch.Tensor, list[int]]:
    """Final-position queries (N, H, d), mean label-word keys per class (C, H_kv, d), predicted label indices."""
    label_ids = first_label_ids(lm, labels, prompts[0].template)
    queries, preds = [], []
    # Gathered in fp32 on the CPU, whatever the model's dtype and devices: the PCA below needs fp32.
    key_sum = torch.zeros(len(labels), lm.n_kv_heads * lm.head_dim)
    key_n = torch.zeros(len(labels))
    batches = [prompts[s: s + batch_size] for s in range(0, len(prompts), batch_size)]
    for batch in progress(batches):
        enc = encode(lm, [p.text for p in batch])
        with lm.lock, lm.adapter.pre_rope_qk([layer]) as qk:
            preds += prefill(lm, enc)[:, label_ids].argmax(-1).tolist()
            q_all, k_all = qk[layer]
        width = enc.input_ids.shape[1]
        queries.append(q_all[:, -1].float().cpu())
        for b, p in enumerate(batch):
            shift = width - len(p)
            for demo, toks in zip(p.demos, p.label_tokens):
                c = labels.index(demo.output)
                key_sum[c] += k_all[b, [shift + t for t in toks]].float().mean(0).cpu()
                key_n[c] += 1
    if bool((key_n == 0).any()):
        raise ValueError("every label must appear among the demonstrations to place its anchor")
    q = torch.cat(queries).view(len(prompts), lm.n_heads, lm.head_dim)
    k = (key_sum / key_n[:, None]).view(len(labels), lm.n_kv_heads, lm.head_dim)
    return q, k, preds


def anchor_distances(q: torch.Tensor, k: torch.Tensor, rank: int) -> torch.Tensor:
    """Mean over query heads of the pairwise distance of the anchors in that head's query PCA space, (C, C)."""
    n_heads, groups = q.shape[1], q.shape[1] // k.shape[1]
    total = torch.zeros(k.shape[0], k.shape[0], device=k.device)
    for h in range(n_heads):
        qh = q[:, h] - q[:, h].mean(0)
        basis = torch.linalg.svd(qh, full_matrices=False).Vh[:rank]  # (r, d)
        proj = k[:, h // groups] @ basis.T
        total += torch.cdist(proj, proj)
    return total / n_heads


def _pearson(x: list[float], y: list[float]) -> float | None:
    if len(x) < 3:
        return None
    t = torch.tensor([x, y], dtype=torch.float64)
    t = t - t.mean(1, keepdim=True)
    denom = t.norm(dim=1).prod()
    return float((t[0] @ t[1]) / denom) if denom > 0 else None


def confusion_experiment(
    lm: LoadedModel, task_name: str, prompts: list[AnchorPrompt], labels: list[str], layer: int | None = None,
    rank: int = 10, batch_size: int = 8, progress: Progress = no_progress,
) -> ConfusionResult:
    """Predicted confusability from the anchors vs the confusion matrix of the same prompts."""
    layer = lm.n_layers - 1 if layer is None else layer
    q, k, preds = capture(lm, prompts, labels, layer, batch_size, progress)
    dist = anchor_distances(q, k, rank)
    predicted = 1 - dist / dist.max().clamp(min=1e-12)
    c = len(labels)
    conf = [[0] * c for _ in range(c)]
    for p, y in zip(prompts, preds):
        conf[labels.index(p.query.output)][y] += 1
    pairs = [(i, j) for i in range(c) for j in range(i + 1, c)]
    support = [sum(row) for row in conf]
    rate = [(conf[i][j] + conf[j][i]) / max(1, support[i] + support[j]) for i, j in pairs]
    return ConfusionResult(
        task=task_name, model=lm.name, layer=layer, rank=rank, n=len(prompts), labels=list(labels),
        predicted=predicted.tolist(), confusion=conf, accuracy=sum(conf[i][i] for i in range(c)) / len(prompts),
        correlation=_pearson([float(predicted[i, j]) for i, j in pairs], rate),
    )
