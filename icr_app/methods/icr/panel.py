"""ICR's tab: the router's α(x) and γ(x) for the visitor's query, redrawn with every answer."""

from __future__ import annotations

import gradio as gr

from icr_app.app.kit import AFTER_ANSWERS, AppContext, Page, clip_query, on
from icr_app.core.artefacts import ArtefactError
from icr_app.methods.icr.method import cached_router
from icr_app.methods.icr.view import GUIDE, routing_figures
from icr_app.views.note import note_figure

EXPLAIN = ("ICR adds a low-rank bias to the attention logits of the last third of the layers, along principal "
           "ICL directions (PIDs) found from many ICL prompts. A small router reads the query and sets α(x): how "
           "much to push along each direction, and γ(x): how much each head takes it. It was trained once on "
           "other tasks and is reused here with no examples. " + GUIDE)


def build_tab(ctx: AppContext, page: Page) -> None:
    def maps(query: str):
        try:
            router = cached_router(ctx.lm)
        except (OSError, ArtefactError) as err:  # no pretrained router for this model
            return note_figure(str(err)), note_figure(str(err))
        return routing_figures(router, clip_query(query))

    first = (note_figure(AFTER_ANSWERS), note_figure(AFTER_ANSWERS))  # drawn on page load, after the panels
    with gr.Tab("ICR routing"):
        gr.Markdown(EXPLAIN)
        with gr.Row():
            alpha = gr.Plot(first[0], label="α(x)")
            gamma = gr.Plot(first[1], label="γ(x)")
    on(page.ask.click, maps, page.query, [alpha, gamma], "icr_maps")
    for event in page.task_answered:  # model work: after the panels have answered
        on(event.then, maps, page.query, [alpha, gamma], False)
