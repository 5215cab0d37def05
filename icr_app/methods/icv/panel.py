"""ICV's tab: the visitor's built ICV (from "Build selected methods"): its strength sweep and its file."""

from __future__ import annotations

from icr_app.app.answers import Page
from icr_app.app.built_tab import built_method_tab
from icr_app.app.context import AppContext
from icr_app.app.i18n import t
from icr_app.methods.icv.method import ICV
from icr_app.methods.icv.view import summary, sweep_figure


def build_tab(ctx: AppContext, page: Page) -> None:
    built_method_tab(ctx, page, ICV, t("icv.tab"), t("icv.explain"), t("icv.figure"), sweep_figure, summary)
