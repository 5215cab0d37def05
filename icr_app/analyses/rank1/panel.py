"""The rank-1 tab: the identity's error per layer, ΔW's singular values, its growth with demos, and transfer.

For a built-in task the shipped result (`icl-lab prebuild`) is drawn as soon as the tab opens; the button
recomputes on the visitor's task and settings.
"""

from __future__ import annotations

import gradio as gr
import plotly.graph_objects as go

from icr_app.analyses.rank1 import cached
from icr_app.analyses.rank1.views import (
    error_by_layer_figure,
    norm_vs_demos_figure,
    singular_values_figure,
    transfer_figure,
)
from icr_app.app.kit import JOBS, AppContext, Page, json_file, on
from icr_app.core.tasks import Task

EXPLAIN = ("A prompt's context changes a block's MLP input at the query. That change equals a rank-1 update of the "
           "MLP's first weights plus a residual patch: the context-free block with the patch reproduces the "
           "with-context output exactly. The patch is specific to its query: applied to another query it closes "
           "only part of that query's gap. Reading guide: the blue line (patched) sits at rounding level, far "
           "below the orange one (no patch); σ₂/σ₁ near 1e-7 means rank 1.")


def _placeholder() -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text="run the rank-1 check, or pick a built-in task to see the shipped result",
                       showarrow=False)
    fig.update_layout(xaxis={"visible": False}, yaxis={"visible": False}, height=200)
    return fig


def figures(views: dict, layer: int) -> tuple:
    if "rank1" not in views:
        return tuple(_placeholder() for _ in range(4))
    report = cached.report(views["rank1"])
    layer = min(layer, max(report.layers))
    return (error_by_layer_figure(report), singular_values_figure(report, layer), norm_vs_demos_figure(report, layer),
            transfer_figure(report))


def build_tab(ctx: AppContext, page: Page) -> None:
    def run(task: Task, views: dict, layer: int, shots: int, seed: int, request: gr.Request,
            progress: gr.Progress = gr.Progress()):  # noqa: B008
        step = ctx.progress(progress, request, "rank1", "rank-1")
        views = {**views, "rank1": cached.rank1(ctx.lm, task, int(shots), int(seed), step)}
        return views, *figures(views, int(layer))

    def redraw(views: dict, layer: int):
        return *figures(views, int(layer)), gr.update(maximum=ctx.lm.n_layers - 1)

    def download(views: dict, request: gr.Request) -> str:
        return json_file(ctx.session_dir(request) / "rank1.json", views.get("rank1", {}))

    n_layers = ctx.lm.n_layers
    first = figures(page.initial_views, n_layers // 2)
    with gr.Tab("Rank-1 view"):
        gr.Markdown(EXPLAIN)
        with gr.Row():
            layer = gr.Slider(0, n_layers - 1, value=n_layers // 2, step=1, label="layer to detail")
            btn = gr.Button("Run the rank-1 check", variant="primary")
            stop = gr.Button("Cancel")
        err = gr.Plot(first[0], label="identity error per layer")
        with gr.Row():
            sv = gr.Plot(first[1], label="singular values of ΔW")
            norms = gr.Plot(first[2], label="|ΔW| as demonstrations are added")
        transfer = gr.Plot(first[3], label="transfer to other queries")
        with gr.Row():
            export = gr.Button("Download this result (JSON)")
            export_file = gr.File(label="rank-1 report", interactive=False)
    figs = [err, sv, norms, transfer]
    on(btn.click, run, [page.task, page.views, layer, page.shots, page.seed], [page.views, *figs], "rank1", JOBS)
    layer.release(redraw, [page.views, layer], [*figs, layer], queue=False)
    for event in page.task_changed:
        event.then(redraw, [page.views, layer], [*figs, layer], queue=False)
    ctx.cancel_button(stop, "rank1")
    export.click(download, page.views, export_file, queue=False)
