"""LoRA's tab: fine-tune on the visitor's task (progress, Cancel), see the training curve and the trained
parameters beside SITE's, download the adapter or load one."""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.app.kit import AppContext, Page, TabBuild, TabFigure, built_method_tab, say, t
from icr_app.methods.lora.figures import parameter_bars, training_curve
from icr_app.methods.lora.method import LoraMethod, LoraState


def summary(adapter: LoraState) -> str:
    m, c, cfg = adapter.meta, adapter.meta.curve, adapter.peft
    best = c.val_step.index(c.best_step)
    return say("lora.summary", task=m.task, n=adapter.n_parameters, r=cfg["r"],
               modules=", ".join(cfg["target_modules"]), steps=len(c.train_loss), best=c.best_step,
               loss=c.val_loss[best], acc=c.val_accuracy[best], s=m.build_s)


def beside_site(adapter: LoraState, built: dict) -> go.Figure:
    """LoRA's trained parameters beside SITE's, when the visitor built SITE for this model too."""
    site = built.get("site")
    return parameter_bars(adapter.n_parameters, None if site is None else site.trainable_parameters, say)


def build_tab(ctx: AppContext, page: Page) -> None:
    built_method_tab(ctx, page, LoraMethod, t("lora.tab"), t("lora.explain"), t("lora.curve"), training_curve,
                     summary, second=TabFigure(t("lora.params"), beside_site),
                     build=TabBuild("steps", t("lora.steps"), 0, 400, t("lora.train"), t("lora.load"),
                                    "lora.training"))
