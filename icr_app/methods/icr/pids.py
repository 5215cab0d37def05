"""Principal ICL directions (PIDs, this folder's README.md): where in-context demonstrations move queries and keys.

For each domain we build class-balanced few-shot prompts, capture the LAST-token query and key of every
layer, pool them over all prompts of all domains (the same number per domain) and keep a rank-r PCA basis
per layer: U_q[l] (H·d_h × r) and U_k[l] (H_kv·d_h × r). Keys stay in the k_proj space (no GQA repeat), so
the basis matches what routing projects.

Both open questions are settled by measurement (BENCHMARKS.md "## ICR"; `bench/icr_pid_variants.py`,
`bench/icr_capacity.py`). Pre-RoPE (default): position-free, like vectors pooled over prompts of different
lengths, and a rank-8 pre-RoPE basis keeps more of the ICL shift of q and k. Centred (default): the uncentred
basis's first direction is the mean of q and k, whose projections dwarf the others', so the bias along it is
hundreds of logits per unit of α and routing on it barely trains. The uncentred second moment, which the
theory uses, remains `centred=False`.
"""

from __future__ import annotations

from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from icr_app.core.artefacts import load_artefact, save_artefact
from icr_app.core.attention import layer_of
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import Template
from icr_app.core.scoring import encode, prefill
from icr_app.core.tasks import Task, sample_icl_prompts
from icr_app.methods.icr.routing import Rope, heads_concat

KIND = "pids"
FILE = "pids.safetensors"


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

    def save(self, folder: str | Path, fingerprint: str) -> None:
        save_artefact(Path(folder) / FILE, KIND, {"u_q": self.u_q, "u_k": self.u_k}, self.meta, fingerprint)

    @classmethod
    def load(cls, folder: str | Path, lm: LoadedModel) -> PIDs:
        art = load_artefact(Path(folder) / FILE, KIND, lm.fingerprint, str(lm.device))
        return cls(art.tensors["u_q"], art.tensors["u_k"], art.meta)


def icl_prompts(task: Task, n_prompts: int, demos_per_class: int = 5, max_demos: int = 10, seed: int = 0,
                template: Template | None = None) -> list[str]:
    """Few-shot prompts: class-balanced demonstrations (5 per class, capped for the CPU) then a fresh query."""
    per_class = demos_per_class * len(task.labels) if task.kind == "classification" else demos_per_class
    k = min(per_class, max_demos, len(task.examples) - 1)
    return sample_icl_prompts(task, task.prompt(template), n_prompts, k, seed)


@torch.no_grad()
def capture_last_qk(lm: LoadedModel, prompts: list[str], batch_size: int = 8,
                    progress: Progress = no_progress) -> dict[str, torch.Tensor]:
    """Last-token q and k at every layer, pre- and post-RoPE: {"q_pre": (N, L, d_q), "k_pre", "q_post", "k_post"}."""
    rows: dict[str, list[torch.Tensor]] = {"q_pre": [], "k_pre": [], "q_post": [], "k_post": []}
    post: dict[str, list[torch.Tensor | None]] = {"q": [None] * lm.n_layers, "k": [None] * lm.n_layers}

    def keep_post_rope(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                       attention_mask: torch.Tensor | None, **kw):
        post["q"][layer_of(module)] = heads_concat(query[:, :, -1:])[:, 0].float()
        post["k"][layer_of(module)] = heads_concat(key[:, :, -1:])[:, 0].float()
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kw)

    layers = list(range(lm.n_layers))
    batches = [prompts[s: s + batch_size] for s in range(0, len(prompts), batch_size)]
    for batch in progress(batches, desc="PIDs: q/k of ICL prompts"):
        with lm.lock, lm.adapter.pre_rope_qk(layers) as pre:
            prefill(lm, encode(lm, batch), intervention=nullcontext({"attention_edit": keep_post_rope}))
            pairs = [pre[layer] for layer in layers]
        rows["q_pre"].append(torch.stack([q[:, -1].float() for q, _ in pairs], dim=1).cpu())
        rows["k_pre"].append(torch.stack([k[:, -1].float() for _, k in pairs], dim=1).cpu())
        rows["q_post"].append(torch.stack(post["q"], dim=1).cpu())  # type: ignore[arg-type]
        rows["k_post"].append(torch.stack(post["k"], dim=1).cpu())  # type: ignore[arg-type]
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
    meta = {"domains": [t.name for t in tasks], "prompt_counts": dict(counts),
            "demos_per_class": demos_per_class, "max_demos": max_demos, "seed": seed,
            "prompt_format": template.format if template else "plain"}
    return fit_pids(captured, rank, rope, centred, meta)


def random_basis(pids: PIDs, seed: int = 0) -> PIDs:
    """The paper's ablation: random orthonormal bases of the same shapes and rank in place of the PIDs."""
    gen = torch.Generator().manual_seed(seed)

    def orth(shape: torch.Size) -> torch.Tensor:
        return torch.linalg.qr(torch.randn(shape, generator=gen, dtype=torch.float64))[0].float()

    return PIDs(orth(pids.u_q.shape), orth(pids.u_k.shape), {**pids.meta, "basis": "random", "basis_seed": seed})
