"""ICV's tab: the visitor's built ICV (from "Build selected methods"): its strength sweep and its file."""

from __future__ import annotations

from icr_app.app.kit import AppContext, Page, built_method_tab, say, t
from icr_app.methods.icv.figures import sweep_figure
from icr_app.methods.icv.method import ICVMethod, ICVState


def summary(state: ICVState) -> str:
    m = state.meta
    return say("icv.summary", task=m.task, n_demos=m.n_demos, strength=m.strength, n_val=m.n_val, s=m.build_s)


def build_tab(ctx: AppContext, page: Page) -> None:
    built_method_tab(ctx, page, ICVMethod, t("icv.tab"), t("icv.explain"), t("icv.figure"), sweep_figure, summary)
