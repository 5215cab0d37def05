"""The rank-1 tab: the identity's error per layer, ΔW's singular values, its growth with demos, and transfer.

For a built-in task the shipped result (`icl-lab prebuild`) is drawn as soon as the tab opens; the button
recomputes on the visitor's task and settings.
"""

from __future__ import annotations

import gradio as gr

from icr_app.analyses.rank1 import cached
from icr_app.analyses.rank1.figures import view_figures
from icr_app.app.context import JOBS, AppContext, on
from icr_app.app.exports import json_file
from icr_app.app.figures import named_all
from icr_app.app.i18n import say, t
from icr_app.app.page import Page
from icr_app.core.tasks import Task


def figures(views: dict, layer: int) -> tuple:
    """The four figures, then the note on layers without an update, in the visitor's language."""
    return view_figures(views, say, layer)


def build_tab(ctx: AppContext, page: Page) -> None:
    def run(task: Task, views: dict, layer: int, shots: int, seed: int, request: gr.Request,
            progress: gr.Progress = gr.Progress()):  # noqa: B008
        step = ctx.progress(progress, request, "rank1", say("rank1.progress"))
        views = {**views, "rank1": cached.rank1(ctx.lm, task, int(shots), int(seed), step)}
        return views, *named_all(figures(views, int(layer)), ctx.lm.name, say)

    def redraw(views: dict, layer: int, request: gr.Request):
        """The figures of `views`, which are the visitor's model's (a switch brings that model's views)."""
        return (*named_all(figures(views, int(layer)), ctx.model_name(request), say),
                gr.update(maximum=ctx.shape(request)[0] - 1))

    def download(views: dict, request: gr.Request) -> str:
        return json_file(ctx.session_dir(request) / "rank1.json", views.get("rank1", {}))

    n_layers = ctx.lm.n_layers
    first = named_all(figures(page.initial_views, n_layers // 2), ctx.lm.name, say)
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
