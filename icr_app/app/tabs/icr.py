"""ICR's tab: the router's α(x) and γ(x) for the visitor's query, redrawn with every answer."""

from __future__ import annotations

import gradio as gr
import plotly.graph_objects as go

from icr_app.app.context import AppContext, clip_query, on
from icr_app.app.i18n import say, t
from icr_app.app.messages import translated_error
from icr_app.app.page import Page
from icr_app.core.artefacts import ArtefactError
from icr_app.figures.note import note_figure
from icr_app.methods.icr.figures import routing_figures
from icr_app.methods.icr.method import cached_router


def routing_maps(ctx: AppContext, query: str, height: int = 200) -> tuple[go.Figure, go.Figure]:
    """α(x) and γ(x) of the model's pretrained router for the query; a note (of `height`) saying why when the model
    has none."""
    try:
        router = cached_router(ctx.lm)
    except (OSError, ArtefactError) as err:
        return (note_figure(translated_error(err), height=height),) * 2
    return routing_figures(router, say, clip_query(query))


def build_tab(ctx: AppContext, page: Page) -> None:
    def maps(query: str):
        return routing_maps(ctx, query)

    first = (note_figure(say("after_answers")),) * 2  # drawn on page load, after the panels
    with gr.Tab(t("icr.tab")):
        gr.Markdown(t("icr.explain"))
        with gr.Row():
            alpha = gr.Plot(first[0], label="α(x)")
            gamma = gr.Plot(first[1], label="γ(x)")
    on(page.ask.click, maps, page.query, [alpha, gamma], "icr_maps")
    for event in page.task_answered:  # model work: after the panels have answered
        on(event.then, maps, page.query, [alpha, gamma], False)
