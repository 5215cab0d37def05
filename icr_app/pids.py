"""Principal ICL directions (PIDs, DESIGN.md §2): where in-context demonstrations move queries and keys.

For each domain we build class-balanced few-shot prompts, capture the LAST-token query and key of every
layer, pool them over all prompts of all domains (the same number per domain) and keep a rank-r PCA basis
per layer: U_q[l] (H·d_h × r) and U_k[l] (H_kv·d_h × r). Keys stay in the k_proj space (no GQA repeat), so
the basis matches what routing projects.

Both open questions are settled by measurement (BENCHMARKS.md "## ICR"). Pre-RoPE (default): rank-8
pre-RoPE PIDs keep ~1.5x more of the ICL shift of q and k than post-RoPE ones (bench/icr_pid_variants.py).
Centred (default): on capturing that shift the two are a tie, but the uncentred basis's first direction is
the mean of q and k, whose projections are ~40 and ~18 against 1-7 for the other directions, so the bias
along it is hundreds of logits per unit of α. With free α and γ on one task (bench/icr_capacity.py) routing
on uncentred PIDs barely trains (FV sentiment stays at 0.44, present-past 0.00 -> 0.02); on centred PIDs it
reaches 0.62 and 0.34. The uncentred second moment, which the theory uses, remains `centred=False`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from icr_app.hooks import attention_function, hooks
from icr_app.icr_io import load_artefact, save_artefact
from icr_app.methods import Progress, no_progress
from icr_app.models import LoadedModel
from icr_app.prompts import Template, sample_icl_prompts
from icr_app.routing import Rope, heads_concat
from icr_app.scoring import encode
from icr_app.tasks import Task

STEM = "pids"


@dataclass
class PIDs:
    """Per-layer bases for every layer of one model, plus how they were made."""

    u_q: torch.Tensor  # (L, d_q, r), orthonormal columns
    u_k: torch.Tensor  # (L, d_k, r)
    meta: dict[str, Any]

    @property
    def rank(self) -> int:
        return self.u_q.shape[-1]

    @property
    def rope(self) -> Rope:
        return self.meta["rope"]

    def save(self, folder: str | Path) -> None:
        save_artefact(folder, STEM, {"u_q": self.u_q, "u_k": self.u_k}, self.meta)

    @classmethod
    def load(cls, folder: str | Path, lm: LoadedModel) -> PIDs:
        tensors, meta = load_artefact(folder, STEM, lm)
        return cls(tensors["u_q"], tensors["u_k"], meta)


def icl_prompts(task: Task, n_prompts: int, demos_per_class: int = 5, max_demos: int = 10, seed: int = 0,
                template: Template | None = None) -> list[str]:
    """Few-shot prompts: class-balanced demonstrations (5 per class, capped for the CPU) then a fresh query."""
    per_class = demos_per_class * len(task.labels) if task.kind == "classification" else demos_per_class
    k = min(per_class, max_demos, len(task.examples) - 1)
    return sample_icl_prompts(task, template or Template(), n_prompts, k, seed)


@torch.no_grad()
def capture_last_qk(lm: LoadedModel, prompts: list[str], batch_size: int = 8,
                    progress: Progress = no_progress) -> dict[str, torch.Tensor]:
    """Last-token q and k at every layer, pre- and post-RoPE: {"q_pre": (N, L, d_q), "k_pre", "q_post", "k_post"}."""
    rows: dict[str, list[torch.Tensor]] = {"q_pre": [], "k_pre": [], "q_post": [], "k_post": []}
    step: dict[str, list[torch.Tensor | None]] = {k: [None] * lm.n_layers for k in rows}

    def keep(layer: int, which: str):
        def fn(_module: torch.nn.Module, _inputs: tuple, output: torch.Tensor) -> None:
            step[which][layer] = output[:, -1].float()
        return fn

    def attention(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                  attention_mask: torch.Tensor | None, **kw):
        step["q_post"][module.layer_idx] = heads_concat(query[:, :, -1:])[:, 0].float()
        step["k_post"][module.layer_idx] = heads_concat(key[:, :, -1:])[:, 0].float()
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kw)

    attn = [layer.self_attn for layer in lm.layers]
    post = [(a.q_proj, keep(i, "q_pre")) for i, a in enumerate(attn)] + [
        (a.k_proj, keep(i, "k_pre")) for i, a in enumerate(attn)]
    batches = [prompts[s: s + batch_size] for s in range(0, len(prompts), batch_size)]
    with lm.lock, hooks(post=post), attention_function(lm.model, f"icr_capture_{id(lm.model)}", attention):
        for batch in progress(batches, desc="PIDs: q/k of ICL prompts"):
            enc = encode(lm, batch)
            lm.model(input_ids=enc.input_ids, attention_mask=enc.attention_mask,
                     position_ids=enc.position_ids, logits_to_keep=1)
            for name in rows:
                rows[name].append(torch.stack(step[name], dim=1).cpu())  # type: ignore[arg-type]
    return {name: torch.cat(parts) for name, parts in rows.items()}


def pca_basis(x: torch.Tensor, rank: int, centred: bool) -> tuple[torch.Tensor, float | None]:
    """Top-`rank` principal directions of rows of x (N, d) -> (d, rank), and the share of energy they keep.

    The share is None when the rows do not vary: layer 0's last-token q is the same in every prompt (it sees
    only the last token, the template's), so centred it is all zeros.
    """
    x = x.double()
    if centred:
        x = x - x.mean(0, keepdim=True)
    _, s, vh = torch.linalg.svd(x, full_matrices=False)
    energy = s.square()
    total = float(energy.sum())
    return vh[:rank].T.float().contiguous(), float(energy[:rank].sum()) / total if total > 0 else None


def fit_pids(captured: dict[str, torch.Tensor], rank: int, rope: Rope, centred: bool,
             meta: dict[str, Any]) -> PIDs:
    """PCA per layer of the pooled last-token vectors."""
    bases: dict[str, list[torch.Tensor]] = {"q": [], "k": []}
    kept: dict[str, list[float | None]] = {"q": [], "k": []}
    for which in ("q", "k"):
        x = captured[f"{which}_{rope}"]
        for layer in range(x.shape[1]):
            u, share = pca_basis(x[:, layer], rank, centred)
            bases[which].append(u)
            kept[which].append(None if share is None else round(share, 4))
    meta = {**meta, "r": rank, "rope": rope, "centred": centred, "layers": list(range(len(bases["q"]))),
            "energy_kept_q": kept["q"], "energy_kept_k": kept["k"]}
    return PIDs(torch.stack(bases["q"]), torch.stack(bases["k"]), meta)


def extract_pids(lm: LoadedModel, tasks: list[Task], rank: int = 8, rope: Rope = "pre", centred: bool = True,
                 n_prompts: int = 32, demos_per_class: int = 5, max_demos: int = 10, seed: int = 0,
                 template: Template | None = None, progress: Progress = no_progress) -> PIDs:
    """Capture, pool and fit: the whole PIDs stage for a list of domains."""
    per_task = [icl_prompts(t, n_prompts, demos_per_class, max_demos, seed + i, template) for i, t in enumerate(tasks)]
    counts: Counter[str] = Counter()
    for task, prompts in zip(tasks, per_task):
        counts[task.name] += len(prompts)  # two domains with one name (a file and a built-in) add up
    captured = capture_last_qk(lm, [p for prompts in per_task for p in prompts], progress=progress)
    meta = {"fingerprint": lm.fingerprint, "domains": [t.name for t in tasks], "prompt_counts": dict(counts),
            "demos_per_class": demos_per_class, "max_demos": max_demos, "seed": seed}
    return fit_pids(captured, rank, rope, centred, meta)


def random_basis(pids: PIDs, seed: int = 0) -> PIDs:
    """The paper's ablation: random orthonormal bases of the same shapes and rank in place of the PIDs."""
    gen = torch.Generator().manual_seed(seed)

    def orth(shape: torch.Size) -> torch.Tensor:
        return torch.linalg.qr(torch.randn(shape, generator=gen, dtype=torch.float64))[0].float()

    return PIDs(orth(pids.u_q.shape), orth(pids.u_k.shape), {**pids.meta, "basis": "random", "basis_seed": seed})
