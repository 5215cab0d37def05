"""The Gradio page: pick a task, ask a query, see the methods side by side, look inside.

One builder per tab: the answers section (`page`), the guided tour (`tour`), each method's own tab (its
`panel` module, named in the registry), the analyses' tabs, and the Evaluate tab. They share an `AppContext`
(the model and the per-visitor bookkeeping) and a `Page` (the visitor's task, built methods and settings).
"""

from __future__ import annotations

import os

import gradio as gr

from icr_app.analyses import REGISTRY as ANALYSES
from icr_app.app.context import AppContext
from icr_app.app.evaluate_tab import build_tab as build_evaluate_tab
from icr_app.app.i18n import APPLY_CHOICE, I18N, follow_choice, language_switch, t
from icr_app.app.page import build_section
from icr_app.app.tour import build_tab as build_tour
from icr_app.core.models import DEFAULT_MODEL, LoadedModel, load_model
from icr_app.core.paths import resolve
from icr_app.core.tasks import MAX_BYTES
from icr_app.methods import REGISTRY


def build_demo(lm: LoadedModel | str | None = None) -> gr.Blocks:
    """The whole page over one loaded model (the tests pass a tiny one)."""
    lm = load_model(lm or DEFAULT_MODEL) if not isinstance(lm, LoadedModel) else lm
    ctx = AppContext(lm)
    with gr.Blocks(title="ICL Lab", delete_cache=(1800, 3600)) as demo:
        switch = language_switch()
        gr.Markdown(t("intro"))
        page = build_section(ctx, demo)
        build_tour(ctx, page)
        for target in [spec.tab for spec in [*REGISTRY.values(), *ANALYSES.values()] if spec.tab]:
            resolve(target)(ctx, page)
        build_evaluate_tab(ctx, page)
        demo.unload(ctx.end_session)
        follow_choice(demo, switch)
    return demo


def launch(model: LoadedModel | str | None = None, **kwargs) -> gr.Blocks:
    """Queue and serve; `ICL_LAB_CONCURRENCY` answers run at once (they take turns on the model's lock)."""
    demo = build_demo(model)
    demo.queue(default_concurrency_limit=int(os.environ.get("ICL_LAB_CONCURRENCY", "4")), max_size=64)
    demo.launch(max_file_size=MAX_BYTES, i18n=I18N, head=f"<script>({APPLY_CHOICE})()</script>", **kwargs)
    return demo
