"""ICR's tab: the router's α(x) and γ(x) for the visitor's query, redrawn with every answer."""

from __future__ import annotations

import gradio as gr
import plotly.graph_objects as go

from icr_app.app.answers import DEFAULT_QUERY, Page
from icr_app.app.context import AppContext, clip_query, on
from icr_app.core.artefacts import ArtefactError
from icr_app.methods.icr.method import cached_router
from icr_app.methods.icr.view import GUIDE, routing_figures

EXPLAIN = ("ICR adds a low-rank bias to the attention logits of the last third of the layers, along principal "
           "ICL directions (PIDs) found from many ICL prompts. A small router reads the query and sets α(x): how "
           "much to push along each direction, and γ(x): how much each head takes it. It was trained once on "
           "other tasks and is reused here with no examples. " + GUIDE)


def _note(text: str) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=text, showarrow=False)
    fig.update_layout(xaxis={"visible": False}, yaxis={"visible": False}, height=200)
    return fig


def build_tab(ctx: AppContext, page: Page) -> None:
    def maps(query: str):
        try:
            router = cached_router(ctx.lm)
        except (OSError, ArtefactError) as err:  # no pretrained router for this model
            return _note(str(err)), _note(str(err))
        return routing_figures(router, clip_query(query))

    first = maps(DEFAULT_QUERY)
    with gr.Tab("ICR routing"):
        gr.Markdown(EXPLAIN)
        with gr.Row():
            alpha = gr.Plot(first[0], label="α(x)")
            gamma = gr.Plot(first[1], label="γ(x)")
    on(page.ask.click, maps, page.query, [alpha, gamma], "icr_maps")
    for event in page.task_answered:  # model work: after the panels have answered
        on(event.then, maps, page.query, [alpha, gamma], False)
