"""The anchor-flow tab: saliency flow over layers, one prompt's links over its text, isolation and the applications.

For a built-in task every figure shows the shipped result (`icl-lab prebuild`, the defaults in `cached.DEFAULTS`)
as soon as the tab opens; each button recomputes on the visitor's settings with progress and Cancel.
"""

from __future__ import annotations

from typing import Any

import gradio as gr
import plotly.graph_objects as go

from icr_app.analyses.anchors import cached
from icr_app.analyses.anchors.compression import CompressionResult, Variant
from icr_app.analyses.anchors.confusion import ConfusionResult
from icr_app.analyses.anchors.flow_views import FlowView, anchor_flow_figure, flow_curves_figure
from icr_app.analyses.anchors.isolation import IsolationRow
from icr_app.analyses.anchors.reweighting import ReweightResult
from icr_app.analyses.anchors.saliency import FlowResult
from icr_app.analyses.anchors.views import compression_figure, confusion_figure, isolation_figure, reweight_figure
from icr_app.app.kit import JOBS, AppContext, Page, json_file, on
from icr_app.core.tasks import Task

EXPLAIN = ("Saliency A ⊙ ∂L/∂A tells how much each attention edge matters for the answer. Label words act as "
           "anchors: in shallow layers text flows into the label words (S_wp); in deep layers the answer reads "
           "them (S_pq). The curves average several prompts; below, one prompt is written out with a layer's "
           "strongest links drawn over it.")
EMPTY = "_run it, or pick a built-in task to see the shipped result_"


def _classification(task: Task) -> None:
    if task.kind != "classification":
        raise gr.Error("the anchor views need a classification task (label words are the anchors)")


def _placeholder(text: str) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=text, showarrow=False)
    fig.update_layout(xaxis={"visible": False}, yaxis={"visible": False}, height=200)
    return fig


def experiment_figure(kind: str, data: dict[str, Any]) -> go.Figure:
    if kind == "re-weighting":
        return reweight_figure([ReweightResult(**data)])
    if kind == "compression":
        return compression_figure(CompressionResult(**{**data, "variants": {
            k: Variant(**v) for k, v in data["variants"].items()}}))
    return confusion_figure(ConfusionResult(**data))


def figures(views: dict[str, Any], layer: int, head: int | None, threshold: float, kind: str) -> tuple:
    """Every figure of the tab from its results (shipped or computed); a placeholder where there is none."""
    flow = views.get("flow")
    curves = flow_curves_figure(FlowResult(**flow["result"])) if flow else _placeholder("no flow computed yet")
    arcs = anchor_flow_figure(FlowView(**flow["view"]), layer, head, threshold) if flow else \
        _placeholder("no flow computed yet")
    iso = isolation_figure([IsolationRow(**r) for r in views["isolation"]]) if "isolation" in views else \
        _placeholder("isolation not run yet")
    exp = experiment_figure(kind, views[kind]) if kind in views else _placeholder(f"{kind} not run yet")
    return curves, arcs, iso, exp


def build_tab(ctx: AppContext, page: Page) -> None:
    def run_flow(task: Task, views: dict, n_prompts: int, shots: int, seed: int, layer: int, head: str,
                 threshold: float, kind: str, request: gr.Request, progress: gr.Progress = gr.Progress()):  # noqa: B008
        _classification(task)
        step = ctx.progress(progress, request, "flow", "saliency")
        views = {**views, "flow": cached.flow(ctx.lm, task, int(n_prompts), int(shots), int(seed), step)}
        return views, *redraw(views, layer, head, threshold, kind)

    def run_isolation(task: Task, views: dict, k: int, shots: int, seed: int, layer: int, head: str,
                      threshold: float, kind: str, request: gr.Request,
                      progress: gr.Progress = gr.Progress()):  # noqa: B008
        _classification(task)
        step = ctx.progress(progress, request, "flow", "isolating")
        views = {**views, "isolation": cached.isolation(ctx.lm, task, min(int(k), ctx.lm.n_layers), int(shots),
                                                        int(seed), step)}
        return views, *redraw(views, layer, head, threshold, kind)

    def run_experiment(task: Task, views: dict, n: int, shots: int, seed: int, layer: int, head: str,
                       threshold: float, kind: str, request: gr.Request,
                       progress: gr.Progress = gr.Progress()):  # noqa: B008
        _classification(task)
        step = ctx.progress(progress, request, "flow", kind)
        views = {**views, kind: cached.experiment(ctx.lm, task, kind, int(n), int(shots), int(seed), step)}
        return views, *redraw(views, layer, head, threshold, kind)

    def redraw(views: dict, layer: int, head: str, threshold: float, kind: str):
        n_layers = ctx.lm.n_layers
        return (*figures(views, min(int(layer), n_layers - 1), None if head == "all heads" else int(head),
                         float(threshold), kind), gr.update(maximum=n_layers - 1),
                gr.update(choices=["all heads", *map(str, range(ctx.lm.n_heads))]))

    def download(views: dict, request: gr.Request) -> str:
        return json_file(ctx.session_dir(request) / "anchor-views.json", views)

    lm = ctx.lm
    first = figures(page.initial_views, lm.n_layers // 2, None, 0.1, "re-weighting")
    with gr.Tab("Anchor flow"):
        views = page.views
        gr.Markdown(EXPLAIN)
        with gr.Row():
            n_prompts = gr.Slider(1, 40, value=cached.DEFAULTS["n_prompts"], step=1, label="prompts to average")
            flow_btn = gr.Button("Compute flow", variant="primary")
            stop = gr.Button("Cancel")
        curves = gr.Plot(first[0], label="flow per layer")
        with gr.Row():
            layer = gr.Slider(0, lm.n_layers - 1, value=lm.n_layers // 2, step=1, label="layer")
            head = gr.Dropdown(["all heads", *map(str, range(lm.n_heads))], value="all heads", label="heads")
            threshold = gr.Slider(0.0, 1.0, value=0.1, step=0.05, label="hide links weaker than (share of the "
                                                                         "strongest)")
        arcs = gr.Plot(first[1], label="one prompt's anchor flow")
        gr.Markdown("**Isolation**: block label words (or as many random tokens) from earlier tokens in the first or "
                    "last K layers. Loyalty = agreement with the unmodified model. Reading guide: the label-word bars "
                    "drop far more than the random ones when the label words really are the anchors.")
        with gr.Row():
            iso_k = gr.Slider(1, lm.n_layers, value=min(cached.DEFAULTS["k"], lm.n_layers), step=1, label="K layers")
            iso_btn = gr.Button("Run isolation")
        iso_plot = gr.Plot(first[2], label="isolation")
        gr.Markdown("**Using the anchors**: *re-weighting* learns one scale per layer, head and label word from 4 "
                    "examples per class; *compression* answers against a KV cache kept only at label words and "
                    "formatting tokens; *confusion* compares how close the label words' keys sit with which classes "
                    "the model confuses.")
        with gr.Row():
            kind = gr.Radio(list(cached.EXPERIMENTS), value="re-weighting", label="experiment")
            n_held = gr.Slider(8, 200, value=cached.DEFAULTS["n_test"], step=1, label="held-out queries")
            run = gr.Button("Run experiment")
        plot = gr.Plot(first[3], label="anchor experiment")
        with gr.Row():
            export = gr.Button("Download these results (JSON)")
            export_file = gr.File(label="anchor results", interactive=False)
    outs = [curves, arcs, iso_plot, plot, layer, head]
    settings = [layer, head, threshold, kind]
    draw = [views, *settings]
    for event, fn, inputs, name in (
        (flow_btn.click, run_flow, [page.task, views, n_prompts, page.shots, page.seed], "flow"),
        (iso_btn.click, run_isolation, [page.task, views, iso_k, page.shots, page.seed], "isolation"),
        (run.click, run_experiment, [page.task, views, n_held, page.shots, page.seed], "anchor_experiment"),
    ):
        on(event, fn, inputs + settings, [views, *outs], name, JOBS)
    for control in (layer, head, threshold, kind):
        control.change(redraw, draw, outs, queue=False)
    for event in page.task_changed:
        event.then(redraw, draw, outs, queue=False)
    ctx.cancel_button(stop, "flow")
    export.click(download, views, export_file, queue=False)
