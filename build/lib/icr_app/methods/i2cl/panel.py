"""I2CL's tab: the visitor's built I2CL (from "Build selected methods"): its coefficients per layer and its file."""

from __future__ import annotations

from icr_app.app.kit import AppContext, Page, built_method_tab, say, t
from icr_app.methods.i2cl.figures import coefficient_figure
from icr_app.methods.i2cl.method import I2CLMethod, I2CLState


def summary(state: I2CLState) -> str:
    m = state.meta
    return say("i2cl.summary", task=m.task, n_demos=m.n_demos, n_cal=m.n_calibration, steps=m.steps, loss=m.loss,
               s=m.build_s)


def build_tab(ctx: AppContext, page: Page) -> None:
    built_method_tab(ctx, page, I2CLMethod, t("i2cl.tab"), t("i2cl.explain"), t("i2cl.figure"), coefficient_figure,
                     summary)
