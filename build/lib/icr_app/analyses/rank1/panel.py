"""The rank-1 tab: the identity's error per layer, ΔW's singular values, its growth with demos, and transfer.

For a built-in task the shipped result (`icl-lab prebuild`) is drawn as soon as the tab opens; the button
recomputes on the visitor's task and settings.
"""

from __future__ import annotations

import gradio as gr

from icr_app.analyses.rank1 import cached
from icr_app.analyses.rank1.analysis import Rank1Report
from icr_app.analyses.rank1.figures import (
    error_by_layer_figure,
    norm_vs_demos_figure,
    singular_values_figure,
    transfer_figure,
)
from icr_app.app.kit import JOBS, AppContext, Page, json_file, on, say, t
from icr_app.core.tasks import Task
from icr_app.figures.note import note_figure


def figures(views: dict, layer: int) -> tuple:
    """The four figures, then the note on layers without an update (empty when every layer has one)."""
    if "rank1" not in views:
        return *(note_figure(say("rank1.empty")) for _ in range(4)), ""
    report = cached.report(views["rank1"])
    layer = min(layer, max(report.layers))
    return (error_by_layer_figure(report, say), singular_values_figure(report, say, layer),
            norm_vs_demos_figure(report, say, layer), transfer_figure(report, say), no_update_note(report))


def no_update_note(report: Rank1Report) -> str:
    """Which checked layers have no update and why, in the visitor's language; empty when every layer has one."""
    if not report.no_update_layers:
        return ""
    return say("rank1.no_update", layers=", ".join(map(str, report.no_update_layers)))


def build_tab(ctx: AppContext, page: Page) -> None:
    def run(task: Task, views: dict, layer: int, shots: int, seed: int, request: gr.Request,
            progress: gr.Progress = gr.Progress()):  # noqa: B008
        step = ctx.progress(progress, request, "rank1", say("rank1.progress"))
        views = {**views, "rank1": cached.rank1(ctx.lm, task, int(shots), int(seed), step)}
        return views, *figures(views, int(layer))

    def redraw(views: dict, layer: int):
        return *figures(views, int(layer)), gr.update(maximum=ctx.lm.n_layers - 1)

    def download(views: dict, request: gr.Request) -> str:
        return json_file(ctx.session_dir(request) / "rank1.json", views.get("rank1", {}))

    n_layers = ctx.lm.n_layers
    first = figures(page.initial_views, n_layers // 2)
    with gr.Tab(t("rank1.tab")):
        gr.Markdown(t("rank1.explain"))
        with gr.Row():
            layer = gr.Slider(0, n_layers - 1, value=n_layers // 2, step=1, label=t("rank1.layer"))
            btn = gr.Button(t("rank1.run"), variant="primary")
            stop = gr.Button(t("cancel"))
        err = gr.Plot(first[0], label=t("rank1.error"))
        with gr.Row():
            sv = gr.Plot(first[1], label=t("rank1.sv"))
            norms = gr.Plot(first[2], label=t("rank1.norms"))
        no_update = gr.Markdown(first[4])
        transfer = gr.Plot(first[3], label=t("rank1.transfer"))
        with gr.Row():
            export = gr.Button(t("rank1.download"))
            export_file = gr.File(label=t("rank1.file"), interactive=False)
    figs = [err, sv, norms, transfer, no_update]
    on(btn.click, run, [page.task, page.views, layer, page.shots, page.seed], [page.views, *figs], "rank1", JOBS)
    layer.release(redraw, [page.views, layer], [*figs, layer], queue=False)
    for event in page.task_changed:
        event.then(redraw, [page.views, layer], [*figs, layer], queue=False)
    ctx.cancel_button(stop, "rank1")
    export.click(download, page.views, export_file, queue=False)
