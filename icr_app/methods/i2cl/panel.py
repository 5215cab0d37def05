"""I2CL's tab: the visitor's built I2CL (from "Build selected methods"): its coefficients per layer and its file."""

from __future__ import annotations

from icr_app.app.answers import Page
from icr_app.app.built_tab import built_method_tab
from icr_app.app.context import AppContext
from icr_app.app.i18n import t
from icr_app.methods.i2cl.method import I2CL
from icr_app.methods.i2cl.view import coefficient_figure, summary


def build_tab(ctx: AppContext, page: Page) -> None:
    built_method_tab(ctx, page, I2CL, t("i2cl.tab"), t("i2cl.explain"), t("i2cl.figure"), coefficient_figure, summary)
