"""The guided tour: five short steps through why implicit ICL works, each one sentence of why, one live figure and
one control to try, on the visitor's task (the shipped results for a built-in task, so every figure is there
at once)."""

from __future__ import annotations

import gradio as gr
import plotly.graph_objects as go

from icr_app import prebuilt
from icr_app.analyses.anchors.figures import arcs_figure
from icr_app.analyses.rank1.figures import view_figures as rank1_figures
from icr_app.app.built_tab import built_method
from icr_app.app.context import AppContext, clip_query, on
from icr_app.app.i18n import say, t
from icr_app.app.messages import translated_error
from icr_app.app.page import Page, predict_one
from icr_app.core.tasks import Task
from icr_app.figures.note import note_figure
from icr_app.methods.base import BuildError
from icr_app.methods.icr.figures import query_maps
from icr_app.methods.site.figures import alpha_heatmap


def _note(text: str) -> go.Figure:
    return note_figure(text, height=220)


def _bars(rows: dict[str, dict[str, float]], title: str) -> go.Figure:
    fig = go.Figure([go.Bar(name=name, x=list(probs), y=list(probs.values()),
                            hovertemplate=f"{name}: %{{x}} %{{y:.3f}}<extra></extra>") for name, probs in rows.items()])
    fig.update_layout(title=title, barmode="group", yaxis={"range": [0, 1], "title": say("probability")},
                      xaxis_title=say("label"), height=300)
    return fig


def build_tab(ctx: AppContext, page: Page) -> None:
    def step1(task: Task, query: str, shots: int, seed: int) -> go.Figure:
        if task.kind != "classification":
            return _note(say("tour.open_task"))
        query = clip_query(query)
        rows = {title: predict_one(ctx, name, task, {}, query, shots, seed).prediction.label_probs
                for name, title in (("zero-shot", say("tour.zero")), ("few-shot", say("tour.few", n=int(shots))))}
        return _bars(rows, say("tour.versus", query=query[:50]))

    def step2(built: dict, query: str, strength: float) -> tuple[go.Figure, go.Figure]:
        method = built_method(ctx, built, "site")
        if method is None or method.kind != "classification":
            text = say("tour.build_site")
            return _note(text), _note(text)
        probs = method.scaled(strength).predict([clip_query(query)])[0].label_probs
        return alpha_heatmap(method.state, say), _bars({say("tour.site_at", strength=float(strength)): probs},
                                                 say("tour.site_no_example"))

    def step3(task: Task, query: str) -> go.Figure:
        try:
            icr = prebuilt.instant_method(ctx.lm, task, "icr")
        except BuildError as err:  # no router for this model: say why
            return _note(translated_error(err))
        return query_maps(icr, clip_query(query), say)[1]

    def step4(views: dict, layer: int) -> go.Figure:
        if "flow" not in views:
            return _note(say("tour.no_flow"))
        return arcs_figure(views, say, min(int(layer), ctx.shape()[0] - 1), None, 0.2)

    def step5(views: dict, layer: int) -> go.Figure:
        if "rank1" not in views:
            return _note(say("tour.no_rank1"))
        return rank1_figures(views, say, int(layer))[1]

    n_layers = ctx.lm.n_layers
    with gr.Tab(t("tour")):
        gr.Markdown(t("tour.intro"))
        gr.Markdown(t("tour.step1"))
        # The live figures (steps 1-3) are drawn when the page opens, after the answer panels: the page is
        # served without waiting for model work.
        fig1 = gr.Plot(_note(say("after_answers")), label=t("tour.fig1"))
        try1 = gr.Button(t("tour.try1"))
        gr.Markdown(t("tour.step2"))
        with gr.Row():
            map2 = gr.Plot(_note(say("tour.site_map")), label=t("tour.map2"))
            fig2 = gr.Plot(_note(say("tour.site_answer")), label=t("tour.fig2"))
        strength = gr.Slider(0.0, 1.0, value=1.0, step=0.1, label=t("tour.strength"))
        gr.Markdown(t("tour.step3"))
        fig3 = gr.Plot(_note(say("after_answers")), label=t("tour.fig3"))
        try3 = gr.Button(t("tour.try3"))
        gr.Markdown(t("tour.step4"))
        fig4 = gr.Plot(step4(page.initial_views, n_layers // 2), label=t("tour.fig4"))
        layer4 = gr.Slider(0, n_layers - 1, value=n_layers // 2, step=1, label=t("layer"))
        gr.Markdown(t("tour.step5"))
        fig5 = gr.Plot(step5(page.initial_views, n_layers // 2), label=t("tour.fig5"))
        layer5 = gr.Slider(0, n_layers - 1, value=n_layers // 2, step=1, label=t("layer"))
    on(try1.click, step1, [page.task, page.query, page.shots, page.seed], fig1, "tour_step1")
    on(strength.release, step2, [page.built, page.query, strength], [map2, fig2], "tour_step2")
    on(try3.click, step3, [page.task, page.query], fig3, "tour_step3")
    layer4.release(step4, [page.views, layer4], fig4, queue=False)
    layer5.release(step5, [page.views, layer5], fig5, queue=False)
    for event in page.task_answered:  # model work: after the panels above have answered
        on(event.then, step1, [page.task, page.query, page.shots, page.seed], fig1, False)
        on(event.then, step2, [page.built, page.query, strength], [map2, fig2], False)
        on(event.then, step3, [page.task, page.query], fig3, False)
    for event in page.task_changed:
        event.then(step4, [page.views, layer4], fig4, queue=False)
        event.then(step5, [page.views, layer5], fig5, queue=False)
