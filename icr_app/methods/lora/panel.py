"""LoRA's tab: fine-tune on the visitor's task (progress, Cancel), see the training curve and the trained
parameters beside SITE's, download the adapter or load one."""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.app.kit import AppContext, Page, TabBuild, TabFigure, built_method_tab
from icr_app.methods.lora.method import LoraMethod, LoraState
from icr_app.methods.lora.view import parameter_bars, training_curve

EXPLAIN = ("**Explicit fine-tuning, not in-context learning.** LoRA changes the model's weights: it trains a "
           "low-rank update ΔW = (α/r)·B·A of each attention projection on the task's examples (the loss is the "
           "answer tokens' only), stops when a held-out part of the examples stops improving, and merges the update "
           "into a private copy of the model, so it answers zero-shot prompts at zero-shot cost. It works because "
           "gradient descent writes the task straight into the weights; it is the reference the implicit methods "
           "(SITE, ICR) are measured against, which keep the weights and steer the activations with far fewer "
           "trained numbers.")


def summary(adapter: LoraState) -> str:
    m, c, cfg = adapter.meta, adapter.meta.curve, adapter.peft
    best = c.val_step.index(c.best_step)
    return (f"LoRA for **{m.task}**: {adapter.n_parameters:,} trained parameters (rank {cfg['r']} on "
            f"{', '.join(cfg['target_modules'])}); {len(c.train_loss)} steps, kept step {c.best_step} (validation "
            f"loss {c.val_loss[best]:.3f}, accuracy {c.val_accuracy[best]:.0%}); built in {m.build_s:.0f} s")


def beside_site(adapter: LoraState, built: dict) -> go.Figure:
    """LoRA's trained parameters beside SITE's, when the visitor built SITE for this model too."""
    site = built.get("site")
    return parameter_bars(adapter.n_parameters, None if site is None else site.trainable_parameters)


def build_tab(ctx: AppContext, page: Page) -> None:
    built_method_tab(ctx, page, LoraMethod, "LoRA (explicit fine-tuning)", EXPLAIN,
                     "training loss and validation accuracy", training_curve, summary,
                     second=TabFigure("trained parameters, LoRA and SITE", beside_site),
                     build=TabBuild("steps", "at most this many training steps", 0, 400, "Fine-tune LoRA"))
