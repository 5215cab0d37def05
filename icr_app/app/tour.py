"""The guided tour: five short steps through why implicit ICL works, each one sentence of why, one live figure and
one control to try, on the visitor's task (the shipped results for a built-in task, so every figure is there
at once)."""

from __future__ import annotations

from dataclasses import replace

import gradio as gr
import plotly.graph_objects as go
import torch

from icr_app.analyses.anchors.flow_views import FlowView, anchor_flow_figure
from icr_app.analyses.rank1 import cached as rank1_cached
from icr_app.analyses.rank1.views import singular_values_figure
from icr_app.app.answers import AFTER_ANSWERS, Page, predict_one
from icr_app.app.built_tab import built_method
from icr_app.app.context import AppContext, clip_query, on
from icr_app.core.artefacts import ArtefactError
from icr_app.core.tasks import Task
from icr_app.methods.icr.method import cached_router
from icr_app.methods.icr.view import routing_figures
from icr_app.methods.site.method import SiteMethod
from icr_app.methods.site.view import alpha_heatmap
from icr_app.views.note import note_figure

STEPS = (
    "**1. Examples in the prompt change the answer.** Few-shot prompting shows the model labelled examples before "
    "the query; the same query gets a different answer than alone (zero-shot). Type a query and compare.",
    "**2. A few heads carry the task.** SITE averages every head's output over few-shot prompts and learns which "
    "heads should carry that task embedding into a zero-shot prompt. Turn its strength up and watch the answer "
    "move with no example in the prompt.",
    "**3. A router can bend attention without any example.** ICR was trained once on other tasks; for each query "
    "it decides how strongly to push attention along principal ICL directions, and in which heads.",
    "**4. Label words are anchors.** In shallow layers the text of each example flows into its label word; in deep "
    "layers the answer position reads the label words. Slide through the layers.",
    "**5. A context is a rank-1 weight update.** What the examples change at the query equals a rank-1 change of "
    "one MLP matrix (plus a shift of the residual stream): the singular values show one, then nothing.",
)


def _note(text: str) -> go.Figure:
    return note_figure(text, height=220)


def _bars(rows: dict[str, dict[str, float]], title: str) -> go.Figure:
    fig = go.Figure([go.Bar(name=name, x=list(probs), y=list(probs.values()),
                            hovertemplate=f"{name}: %{{x}} %{{y:.3f}}<extra></extra>") for name, probs in rows.items()])
    fig.update_layout(title=title, barmode="group", yaxis={"range": [0, 1], "title": "probability"},
                      xaxis_title="label", height=300)
    return fig


def build_tab(ctx: AppContext, page: Page) -> None:
    def step1(task: Task, query: str, shots: int, seed: int) -> go.Figure:
        if task.kind != "classification":
            return _note("an open task: see the answers above (the tour's bars need labels)")
        query = clip_query(query)
        rows = {title: predict_one(ctx, name, task, {}, query, shots, seed).prediction.label_probs
                for name, title in (("zero-shot", "zero-shot"), ("few-shot", f"{int(shots)}-shot"))}
        return _bars(rows, f"“{query[:50]}”: zero-shot vs few-shot")

    def step2(built: dict, query: str, strength: float) -> tuple[go.Figure, go.Figure]:
        method = built_method(ctx, built, SiteMethod)
        if method is None or method.kind != "classification":
            text = "build SITE for this task (SITE tab) to try it"
            return _note(text), _note(text)
        alpha = method.state.alpha * float(strength)
        scaled = replace(method.state, theta=torch.logit(alpha.clamp(1e-6, 1 - 1e-6)))
        probs = SiteMethod(ctx.lm, scaled).predict([clip_query(query)])[0].label_probs
        return alpha_heatmap(method.state), _bars({f"SITE at {float(strength):.0%}": probs},
                                                 "SITE's answer with no example in the prompt")

    def step3(query: str) -> go.Figure:
        try:
            return routing_figures(cached_router(ctx.lm), clip_query(query))[1]
        except (OSError, ArtefactError) as err:
            return _note(str(err))

    def step4(views: dict, layer: int) -> go.Figure:
        flow = views.get("flow")
        if flow is None:
            return _note("compute the flow in the Anchor flow tab (shipped for the built-in tasks)")
        return anchor_flow_figure(FlowView(**flow["view"]), min(int(layer), ctx.lm.n_layers - 1), None, 0.2)

    def step5(views: dict, layer: int) -> go.Figure:
        if "rank1" not in views:
            return _note("run the rank-1 check in its tab (shipped for the built-in tasks)")
        report = rank1_cached.report(views["rank1"])
        return singular_values_figure(report, min(int(layer), max(report.layers)))

    n_layers = ctx.lm.n_layers
    with gr.Tab("Tour"):
        gr.Markdown("Five steps, one idea each. Each figure is live: change the control under it.")
        gr.Markdown(STEPS[0])
        # The live figures (steps 1-3) are drawn when the page opens, after the answer panels: the page is
        # served without waiting for model work.
        fig1 = gr.Plot(_note(AFTER_ANSWERS), label="step 1")
        try1 = gr.Button("Try it with the query above")
        gr.Markdown(STEPS[1])
        with gr.Row():
            map2 = gr.Plot(_note("SITE's head map appears here"), label="step 2: SITE's heads")
            fig2 = gr.Plot(_note("SITE's answer appears here"), label="step 2: SITE's answer")
        strength = gr.Slider(0.0, 1.0, value=1.0, step=0.1, label="SITE's strength (1 = as learnt)")
        gr.Markdown(STEPS[2])
        fig3 = gr.Plot(_note(AFTER_ANSWERS), label="step 3: the router's gate per head")
        try3 = gr.Button("Route the query above")
        gr.Markdown(STEPS[3])
        fig4 = gr.Plot(step4(page.initial_views, n_layers // 2), label="step 4: anchor flow")
        layer4 = gr.Slider(0, n_layers - 1, value=n_layers // 2, step=1, label="layer")
        gr.Markdown(STEPS[4])
        fig5 = gr.Plot(step5(page.initial_views, n_layers // 2), label="step 5: singular values of ΔW")
        layer5 = gr.Slider(0, n_layers - 1, value=n_layers // 2, step=1, label="layer")
    on(try1.click, step1, [page.task, page.query, page.shots, page.seed], fig1, "tour_step1")
    on(strength.release, step2, [page.built, page.query, strength], [map2, fig2], "tour_step2")
    on(try3.click, step3, page.query, fig3, "tour_step3")
    layer4.release(step4, [page.views, layer4], fig4, queue=False)
    layer5.release(step5, [page.views, layer5], fig5, queue=False)
    for event in page.task_answered:  # model work: after the panels above have answered
        on(event.then, step1, [page.task, page.query, page.shots, page.seed], fig1, False)
        on(event.then, step2, [page.built, page.query, strength], [map2, fig2], False)
        on(event.then, step3, page.query, fig3, False)
    for event in page.task_changed:
        event.then(step4, [page.views, layer4], fig4, queue=False)
        event.then(step5, [page.views, layer5], fig5, queue=False)
