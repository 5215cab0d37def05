"""SITE: soft head selection for ICL-derived task embeddings (Park et al., 2025; DESIGN.md §1).

Stage 1 averages each head's last-token output over M few-shot prompts (the task embedding `t`);
stage 2 (`site_train`) learns per-head weights α = sigmoid(θ) that mix `t` into zero-shot prompts;
stage 3 (`SiteMethod`) injects once at the last prompt token, so answering costs about a zero-shot
pass. A built task is a `SiteTask`; `site_artefact` saves and loads it.
"""

from __future__ import annotations

import random
import time
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

import torch

from icr_app.hooks import hooks, o_proj_modules
from icr_app.methods import Method, Progress, ZeroShot, no_progress
from icr_app.models import LoadedModel
from icr_app.prompts import Template, sample_icl_prompts
from icr_app.scoring import LabelError, encode, first_token_id, prefill
from icr_app.site_inject import inject
from icr_app.site_train import PrefixPool, train_theta
from icr_app.tasks import Example, Task, TaskKind


@dataclass(frozen=True)
class SiteConfig:
    """Defaults sized for 2 CPU cores; `paper()` is the paper's setting (M=50, N=10, 400 steps of batch 1)."""

    n_prompts: int = 32  # M: few-shot prompts averaged into the task embedding
    n_demos: int = 8  # N: demonstrations per prompt
    steps: int = 100
    batch_size: int = 16
    lr: float = 0.2
    max_examples: int = 160  # zero-shot training prompts (train + validation) drawn from the user's examples
    val_fraction: float = 0.2
    eval_every: int = 10
    patience: int = 3
    seed: int = 0

    @classmethod
    def paper(cls, **overrides: Any) -> SiteConfig:
        return replace(cls(n_prompts=50, n_demos=10, steps=400, batch_size=1, eval_every=20, patience=5),
                       **overrides)

    @classmethod
    def from_opts(cls, opts: dict[str, Any]) -> SiteConfig:
        """From `evaluate` opts: site_paper, site_prompts, site_demos, site_steps, seed."""
        keys = {"site_prompts": "n_prompts", "site_demos": "n_demos", "site_steps": "steps", "seed": "seed"}
        overrides = {dst: opts[src] for src, dst in keys.items() if opts.get(src) is not None}
        return cls.paper(**overrides) if opts.get("site_paper") else cls(**overrides)


@dataclass
class SiteMeta:
    """Everything needed to reuse a SITE task without its training data (stored in the artefact)."""

    fingerprint: str
    task: str
    kind: TaskKind
    template: dict[str, str]
    labels: list[str]  # classification labels; empty for open tasks
    max_new_tokens: int
    n_prompts: int
    n_demos: int
    steps: int
    best_step: int
    train_loss: float
    val_loss: float
    val_accuracy: float
    build_s: float
    created: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class SiteModelError(ValueError):
    """A SITE task used with a model other than the one it was built for."""


@dataclass
class SiteTask:
    """Task embeddings `t` (L, H, d_h) and head-selection logits `theta` (L, H), both fp32 on CPU."""

    t: torch.Tensor
    theta: torch.Tensor
    meta: SiteMeta

    @property
    def alpha(self) -> torch.Tensor:
        return torch.sigmoid(self.theta)

    def check_model(self, lm: LoadedModel) -> None:
        """Embeddings only make sense in the model that produced them: same fingerprint, same head shapes."""
        if self.meta.fingerprint != lm.fingerprint or tuple(self.t.shape) != (lm.n_layers, lm.n_heads, lm.head_dim):
            raise SiteModelError(
                f"this SITE task was built for model {self.meta.fingerprint} (embeddings {tuple(self.t.shape)}), "
                f"but the loaded model is {lm.fingerprint} ({lm.n_layers}, {lm.n_heads}, {lm.head_dim}); "
                "rebuild it for this model"
            )


@torch.no_grad()
def task_embeddings(lm: LoadedModel, prompts: list[str], batch_size: int = 8,
                    progress: Progress = no_progress) -> torch.Tensor:
    """Mean over prompts of every head's o_proj input at the last token, (L, H, d_h) in fp32."""
    total = torch.zeros(lm.n_layers, lm.n_heads, lm.head_dim, device=lm.device)

    def capture(layer: int):
        def hook(module: torch.nn.Module, args: tuple) -> None:
            x = args[0][:, -1].float()
            total[layer] += x.reshape(x.shape[0], lm.n_heads, lm.head_dim).sum(0)
        return hook

    order = sorted(prompts, key=len)  # similar lengths per batch: less padding
    batches = [order[s: s + batch_size] for s in range(0, len(order), batch_size)]
    for batch in progress(batches):
        enc = encode(lm, batch)
        with lm.lock, hooks(pre=[(m, capture(i)) for i, m in enumerate(o_proj_modules(lm))]):
            prefill(lm, enc)
    return (total / len(prompts)).cpu()


def _holdout(train: Task, cfg: SiteConfig) -> tuple[list[Example], list[Example]]:
    """A seeded sample of at most `max_examples`, split into (fit, validation); both non-empty."""
    pool = random.Random(cfg.seed).sample(list(train.examples), min(cfg.max_examples, len(train.examples)))
    if len(pool) < 2:
        raise ValueError("SITE needs at least 2 training examples (one to fit, one to validate)")
    n_val = min(len(pool) - 1, max(1, round(cfg.val_fraction * len(pool))))
    return pool[n_val:], pool[:n_val]


def build_site(lm: LoadedModel, train: Task, template: Template | None = None, labels: list[str] | None = None,
               config: SiteConfig | None = None, progress: Progress = no_progress) -> SiteTask:
    """Run stages 1 and 2 on a task's examples; `progress` wraps the stage-1 batches, then the training steps."""
    t0 = time.perf_counter()
    cfg = config or SiteConfig()
    base = ZeroShot(lm, train, template, labels)
    t = task_embeddings(lm, sample_icl_prompts(train, base.template, cfg.n_prompts, cfg.n_demos, cfg.seed),
                        progress=progress)
    fit, val = _holdout(train, cfg)
    if base.label_set is not None and not base.label_set.first_token_unique:
        raise LabelError("SITE trains on the first answer token, and two labels here share it; rename a label so "
                         "that their first words differ")
    candidates = None if base.label_set is None else torch.tensor(base.label_set.first_ids, device=lm.device)

    def targets(examples: list[Example]) -> torch.Tensor:
        ids = [first_token_id(lm, e.output) for e in examples]
        if candidates is not None:  # index into the label-restricted logits
            ids = [base.label_set.first_ids.index(i) for i in ids]
        return torch.tensor(ids, device=lm.device)

    def pool(examples: list[Example]) -> PrefixPool:
        return PrefixPool(lm, [base.prompt(e.input, 0) for e in examples])

    theta, stats = train_theta(
        lm, t, pool(fit), targets(fit), pool(val), targets(val), candidates, steps=cfg.steps,
        batch_size=cfg.batch_size, lr=cfg.lr, eval_every=cfg.eval_every, patience=cfg.patience, seed=cfg.seed,
        progress=progress,
    )
    meta = SiteMeta(
        fingerprint=lm.fingerprint, task=train.name, kind=base.kind,
        template={"query": base.template.query, "sep": base.template.sep},
        labels=list(base.labels) if base.label_set is not None else [], max_new_tokens=base.max_new_tokens,
        n_prompts=cfg.n_prompts, n_demos=cfg.n_demos, steps=stats.steps, best_step=stats.best_step,
        train_loss=stats.train_loss, val_loss=stats.val_loss, val_accuracy=stats.val_accuracy,
        build_s=time.perf_counter() - t0,
    )
    return SiteTask(t=t, theta=theta, meta=meta)


class SiteMethod(Method):
    """Zero-shot prompts with the task embedding injected at the last token during prefill."""

    name = "site"

    def __init__(self, lm: LoadedModel, site: SiteTask) -> None:
        site.check_model(lm)
        meta = site.meta
        # Method reads only the kind, the labels and the answer length from a task; the artefact keeps those.
        stand_in = Task(meta.task, tuple(Example(y, y) for y in meta.labels or ["?"]), meta.kind)
        super().__init__(lm, stand_in, Template(**meta.template), meta.labels or None)
        self.max_new_tokens = meta.max_new_tokens
        self.site = site

    def intervention(self, queries: list[str]) -> AbstractContextManager:
        return inject(self.lm, self.site.t, self.site.alpha)


def site_builder(lm: LoadedModel, train: Task, template: Template, labels: list[str], opts: dict[str, Any],
                 progress: Progress) -> Method:
    """The `evaluate.METHODS` entry: build on the train split with `SiteConfig.from_opts(opts)`."""
    return SiteMethod(lm, build_site(lm, train, template, labels, SiteConfig.from_opts(opts), progress))
