"""SITE: soft head selection for ICL-derived task embeddings (Park et al., 2025; icr_app/methods/site/README.md).

Stage 1 averages each head's last-token output over M few-shot prompts (the task embedding `t`);
stage 2 (`train`) learns per-head weights α = sigmoid(θ) that mix `t` into zero-shot prompts;
stage 3 (`SiteMethod`) injects once at the last prompt token, so answering costs about a zero-shot
pass. A built task is a `SiteState` (`artefact`: what it holds, and its file).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field, replace

import torch

from icr_app.core.capture import head_outputs, last_token_means
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.scoring import Intervention, LabelError, no_intervention
from icr_app.core.tasks import Example, Task, sample_icl_prompts
from icr_app.methods.answer_loss import Objective, prompt_examples, scorer_for
from icr_app.methods.base import BuildContext, Method
from icr_app.methods.site.artefact import SiteMeta, SiteState
from icr_app.methods.site.inject import inject
from icr_app.methods.site.train import train_theta
from icr_app.methods.state import StatefulMethod, built_fields


@dataclass(frozen=True)
class SiteConfig:
    """Defaults sized for 2 CPU cores (the budget that held accuracy at a quarter of the previous build time,
    BENCHMARKS.md); `paper()` is the paper's setting (M=50, N=10, 400 steps of batch 1)."""

    n_prompts: int = field(default=16, metadata={"flag": "prompts",
                                                 "help": "M, the few-shot prompts averaged into the task embedding"})
    n_demos: int = field(default=6, metadata={"flag": "demos", "help": "N, demonstrations per prompt"})
    steps: int = field(default=30, metadata={"help": "at most this many training steps of α"})
    batch_size: int = field(default=8, metadata={"help": "zero-shot prompts per training step"})
    lr: float = field(default=0.3, metadata={"help": "Adam learning rate of θ (α = sigmoid θ)"})
    max_examples: int = field(default=160, metadata={
        "help": "zero-shot training prompts (fit + validation) drawn from the examples"})
    val_fraction: float = field(default=0.2, metadata={"help": "share of those kept to validate (early stopping)"})
    eval_every: int = field(default=5, metadata={"help": "validate every this many steps"})
    patience: int = field(default=3, metadata={"help": "stop after this many validations without improvement"})
    objective: Objective = field(default="answer", metadata={
        "help": "train α on the whole answer's log-likelihood ('answer': over the labels' full sequences for "
                "classification) or the first answer token's cross-entropy ('first-token', the paper's)"})
    decode_inject: bool = field(default=False, metadata={
        "help": "also inject at every generated token of an open task (the paper injects once, at the prompt)"})

    @classmethod
    def paper(cls) -> SiteConfig:
        return cls(n_prompts=50, n_demos=10, steps=400, batch_size=1, lr=0.2, eval_every=20, patience=5,
                   objective="first-token")


def task_embeddings(lm: LoadedModel, prompts: list[str], batch_size: int = 8,
                    progress: Progress = no_progress) -> torch.Tensor:
    """Mean over prompts of every head's output (the input of its output projection) at the last token,
    (L, H, d_h) in fp32."""
    means = last_token_means(lm, prompts, head_outputs(lm), "input", batch_size, progress, "SITE: task embeddings")
    return torch.stack([means[layer].reshape(lm.n_heads, lm.head_dim) for layer in range(lm.n_layers)])


def _holdout(train: Task, cfg: SiteConfig, seed: int) -> tuple[list[Example], list[Example]]:
    """A seeded sample of at most `max_examples`, split into (fit, validation); both non-empty."""
    pool = random.Random(seed).sample(list(train.examples), min(cfg.max_examples, len(train.examples)))
    if len(pool) < 2:
        raise ValueError("SITE needs at least 2 training examples (one to fit, one to validate)")
    n_val = min(len(pool) - 1, max(1, round(cfg.val_fraction * len(pool))))
    return pool[n_val:], pool[:n_val]


def build(ctx: BuildContext, cfg: SiteConfig) -> SiteMethod:
    """Run stages 1 and 2 on a task's examples; `progress` wraps the stage-1 batches, then the training steps."""
    lm, train, answering, seed, progress = ctx.lm, ctx.train, ctx.answering, ctx.seed, ctx.progress
    t0 = time.perf_counter()
    base = Method(lm, answering)
    ls = base.label_set
    if cfg.objective == "first-token" and ls is not None and not ls.first_token_unique:
        raise LabelError("label.site_first_token")
    fit, val = _holdout(train, cfg, seed)
    t = task_embeddings(lm, sample_icl_prompts(train, base.template, cfg.n_prompts, cfg.n_demos, seed),
                        progress=progress)
    theta, stats = train_theta(
        lm, t, prompt_examples(lm, base, fit), prompt_examples(lm, base, val), scorer_for(lm, base, cfg.objective),
        steps=cfg.steps, batch_size=cfg.batch_size, lr=cfg.lr, eval_every=cfg.eval_every, patience=cfg.patience,
        seed=seed, progress=progress,
    )
    meta = SiteMeta(
        task=train.name, **built_fields(lm, answering), n_prompts=cfg.n_prompts, n_demos=cfg.n_demos,
        steps=stats.steps, best_step=stats.best_step, train_loss=stats.train_loss, val_loss=stats.val_loss,
        val_accuracy=stats.val_accuracy, build_s=time.perf_counter() - t0, seed=seed, objective=cfg.objective,
    )
    return SiteMethod(lm, SiteState(t=t, theta=theta, meta=meta, fingerprint=lm.fingerprint), cfg.decode_inject)


class SiteMethod(StatefulMethod):
    """Zero-shot prompts with the task embedding injected at the last token during prefill."""

    name = "site"
    STATE = SiteState
    state: SiteState

    def __init__(self, lm: LoadedModel, site: SiteState, decode_inject: bool = False) -> None:
        super().__init__(lm, site)
        self.decode_inject = decode_inject

    def intervention(self, queries: list[str]) -> Intervention:
        return inject(self.lm, self.state.t, self.state.alpha)

    def decode_intervention(self, queries: list[str]) -> Intervention:
        return inject(self.lm, self.state.t, self.state.alpha) if self.decode_inject else no_intervention()

    def scaled(self, strength: float) -> SiteMethod:
        """This SITE with every head's weight α multiplied by `strength` (0: almost zero-shot, 1: as built)."""
        alpha = (self.state.alpha * float(strength)).clamp(1e-6, 1 - 1e-6)  # logit stays finite
        return SiteMethod(self.lm, replace(self.state, theta=torch.logit(alpha)), self.decode_inject)


PAPER = ("the paper's setting: M=50, N=10, 400 steps of batch 1, Adam lr 0.2", SiteConfig.paper)
FIRST_TOKEN = ("the defaults with the paper's first-token objective", lambda: SiteConfig(objective="first-token"))


def neutral(method: SiteMethod) -> SiteMethod:
    """The same task embeddings with every head weight α at 0: nothing is injected."""
    theta = torch.full_like(method.state.theta, -torch.inf)  # α = sigmoid(θ) is exactly 0
    return SiteMethod(method.lm, replace(method.state, theta=theta), method.decode_inject)
