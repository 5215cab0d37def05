"""ICR's tab: the router's α(x) and γ(x) for the visitor's query, drawn when they press Answer."""

from __future__ import annotations

import gradio as gr

from icr_app.app.answers import Page
from icr_app.app.context import AppContext, clip_query, on
from icr_app.core.artefacts import ArtefactError
from icr_app.methods.icr.method import cached_router
from icr_app.methods.icr.view import routing_figures

EXPLAIN = ("ICR adds a low-rank bias to the attention logits of the last third of the layers, along principal "
           "ICL directions (PIDs) found from many ICL prompts. A small router reads the query and sets α(x): how "
           "much to push along each direction, and γ(x): how much each head takes it. It was trained once on "
           "other tasks and is reused here with no examples.")


def build_tab(ctx: AppContext, page: Page) -> None:
    try:
        router, note = cached_router(ctx.lm), ""
    except (OSError, ArtefactError) as err:  # no pretrained router for this model
        router, note = None, str(err)

    def maps(query: str):
        if router is None:
            raise gr.Error(note)
        return routing_figures(router, clip_query(query))

    with gr.Tab("ICR routing"):
        gr.Markdown(EXPLAIN + (f"\n\n**{note}**" if note else ""))
        with gr.Row():
            alpha = gr.Plot(label="α(x)")
            gamma = gr.Plot(label="γ(x)")
    if router is not None:
        on(page.ask.click, maps, page.query, [alpha, gamma], "icr_maps")
