"""The rank-1 tab: the identity's error per layer, ΔW's singular values, its growth with demos, and transfer."""

from __future__ import annotations

import gradio as gr

from icr_app.analyses.rank1.analysis import rank1_analysis
from icr_app.analyses.rank1.views import (
    error_by_layer_figure,
    norm_vs_demos_figure,
    singular_values_figure,
    transfer_figure,
)
from icr_app.app.answers import Page
from icr_app.app.context import JOBS, AppContext, on
from icr_app.core.tasks import Task

EXPLAIN = ("A prompt's context changes a block's MLP input at the query. That change equals a rank-1 update of the "
           "MLP's first weights plus a residual patch: the context-free block with the patch reproduces the "
           "with-context output exactly. The patch is specific to its query: applied to another query it closes "
           "only part of that query's gap.")


def build_tab(ctx: AppContext, page: Page) -> None:
    lm = ctx.lm

    def rank1(task: Task, layer: int, shots: int, seed: int, request: gr.Request,
              progress: gr.Progress = gr.Progress()):  # noqa: B008
        report = rank1_analysis(lm, task, layer=None, shots=min(int(shots), 8), seed=int(seed),
                                progress=ctx.progress(progress, request, "rank1", "rank-1"))
        layer = min(int(layer), lm.n_layers - 1)
        return (error_by_layer_figure(report), singular_values_figure(report, layer),
                norm_vs_demos_figure(report, layer), transfer_figure(report))

    with gr.Tab("Rank-1 view"):
        gr.Markdown(EXPLAIN)
        with gr.Row():
            layer = gr.Slider(0, lm.n_layers - 1, value=lm.n_layers // 2, step=1, label="layer to detail")
            run = gr.Button("Run the rank-1 check", variant="primary")
            stop = gr.Button("Cancel")
        err = gr.Plot(label="identity error per layer")
        with gr.Row():
            sv = gr.Plot(label="singular values of ΔW")
            norms = gr.Plot(label="|ΔW| as demonstrations are added")
        transfer = gr.Plot(label="transfer to other queries")
    on(run.click, rank1, [page.task, layer, page.shots, page.seed], [err, sv, norms, transfer], "rank1", JOBS)
    ctx.cancel_button(stop, "rank1")
