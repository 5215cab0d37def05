"""The Gradio page: pick a task, ask a query, see the methods side by side, look inside.

One builder per tab: the answers section (`page`), the guided tour (`tabs.tour`), a tab for each method with a
view (`built_tab`, from the view its spec holds), the analyses' tabs
(`tabs.anchors`, `tabs.rank1`), and the Evaluate tab. They share an `AppContext`
(the model and the per-visitor bookkeeping) and a `Page` (the visitor's task, built methods and settings).
"""

from __future__ import annotations

import os

import gradio as gr

from icr_app.app.built_tab import built_method_tab
from icr_app.app.context import AppContext
from icr_app.app.evaluate_tab import build_tab as build_evaluate_tab
from icr_app.app.i18n import APPLY_CHOICE, follow_choice, language_switch, t, translations
from icr_app.app.page import build_section
from icr_app.app.pool import Budget
from icr_app.app.tabs import anchors, rank1, tour
from icr_app.core.loading import LoadOptions
from icr_app.core.models import DEFAULT_MODEL, LoadedModel
from icr_app.core.tasks import MAX_BYTES
from icr_app.methods import REGISTRY

ANALYSIS_TABS = (anchors.build_tab, rank1.build_tab)


def build_demo(lm: LoadedModel | str | None = None, options: LoadOptions | None = None,
               models: list[str] | None = None, budget: Budget | None = None) -> gr.Blocks:
    """The whole page, every visitor starting on `lm` (a name, or a loaded model: the tests pass a tiny one);
    `options` load every model by name, `models` are the picker's choices (default: `lm` and the installed
    built-in models), `budget` how many stay loaded (`pool.Budget`)."""
    ctx = AppContext(lm or DEFAULT_MODEL, options or LoadOptions(), models, budget or Budget())
    with gr.Blocks(title="ICL Lab", delete_cache=(1800, 3600)) as demo:
        switch = language_switch()
        gr.Markdown(t("intro"))
        page = build_section(ctx, demo)
        # every tab's name stays in sight, wrapped onto a second row, rather than folded into a "more" menu
        with gr.Tabs(overflow_behavior="wrap"):
            tour.build_tab(ctx, page)
            for spec in REGISTRY.values():  # in the registry's order
                if spec.view is not None:
                    built_method_tab(ctx, page, spec)
            for build_tab in ANALYSIS_TABS:
                build_tab(ctx, page)
            build_evaluate_tab(ctx, page)
        demo.unload(ctx.end_session)
        follow_choice(demo, switch)
    return demo


def launch(model: LoadedModel | str | None = None, options: LoadOptions | None = None,
           models: list[str] | None = None, budget: Budget | None = None, **kwargs) -> gr.Blocks:
    """Queue and serve (`options`, `models`, `budget`: see `build_demo`; `kwargs`: Gradio's launch settings);
    `ICL_LAB_CONCURRENCY` answers run at once (on one model, they take turns on its lock)."""
    demo = build_demo(model, options, models, budget)
    demo.queue(default_concurrency_limit=int(os.environ.get("ICL_LAB_CONCURRENCY", "4")), max_size=64)
    demo.launch(max_file_size=MAX_BYTES, i18n=translations(), head=f"<script>({APPLY_CHOICE})()</script>", **kwargs)
    return demo
