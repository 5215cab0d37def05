"""The anchor-flow tab: saliency flow over layers, one prompt's links over its text, isolation and the applications.

For a built-in task every figure shows the shipped result (`icl-lab prebuild`, the defaults in `cached.DEFAULTS`)
as soon as the tab opens; each button recomputes on the visitor's settings with progress and Cancel.
"""

from __future__ import annotations

from typing import Any

import gradio as gr
from gradio.i18n import I18nData

from icr_app.analyses.anchors import cached
from icr_app.analyses.anchors.figures import view_figures
from icr_app.app.context import JOBS, AppContext, on
from icr_app.app.exports import json_file
from icr_app.app.figures import named_all
from icr_app.app.i18n import say, t
from icr_app.app.page import Page
from icr_app.core.tasks import Task

ALL_HEADS = "all heads"


def _classification(task: Task) -> None:
    if task.kind != "classification":
        raise gr.Error(say("error.classification_only"))


def heads(n_heads: int) -> list[tuple[I18nData | str, str]]:
    """The head picker's choices: all heads at once (named in the visitor's language), or one by its number."""
    return [(t("anchors.all_heads"), ALL_HEADS), *((str(h), str(h)) for h in range(n_heads))]


def figures(views: dict[str, Any], layer: int, head: int | None, threshold: float, kind: str) -> tuple:
    """Every figure of the tab from its results (shipped or computed), in the visitor's language."""
    return view_figures(views, say, layer, head, threshold, kind)


def build_tab(ctx: AppContext, page: Page) -> None:
    def run_flow(task: Task, views: dict, n_prompts: int, shots: int, seed: int, layer: int, head: str,
                 threshold: float, kind: str, request: gr.Request, progress: gr.Progress = gr.Progress()):  # noqa: B008
        _classification(task)
        step = ctx.progress(progress, request, "flow", say("anchors.saliency"))
        views = {**views, "flow": cached.flow(ctx.lm, task, int(n_prompts), int(shots), int(seed), step)}
        return views, *redraw(views, layer, head, threshold, kind, request)

    def run_isolation(task: Task, views: dict, k: int, shots: int, seed: int, layer: int, head: str,
                      threshold: float, kind: str, request: gr.Request,
                      progress: gr.Progress = gr.Progress()):  # noqa: B008
        _classification(task)
        step = ctx.progress(progress, request, "flow", say("anchors.isolating"))
        views = {**views, "isolation": cached.isolation(ctx.lm, task, min(int(k), ctx.lm.n_layers), int(shots),
                                                        int(seed), step)}
        return views, *redraw(views, layer, head, threshold, kind, request)

    def run_experiment(task: Task, views: dict, n: int, shots: int, seed: int, layer: int, head: str,
                       threshold: float, kind: str, request: gr.Request,
                       progress: gr.Progress = gr.Progress()):  # noqa: B008
        _classification(task)
        step = ctx.progress(progress, request, "flow", say(f"anchors.{kind}"))
        views = {**views, kind: cached.experiment(ctx.lm, task, kind, int(n), int(shots), int(seed), step)}
        return views, *redraw(views, layer, head, threshold, kind, request)

    def redraw(views: dict, layer: int, head: str, threshold: float, kind: str, request: gr.Request):
        """The figures of `views`, which are the visitor's model's (a switch brings that model's views)."""
        n_layers, n_heads = ctx.shape(request)
        shown = figures(views, min(int(layer), n_layers - 1), None if head == ALL_HEADS else int(head),
                        float(threshold), kind)
        return (*named_all(shown, ctx.model_name(request), say), gr.update(maximum=n_layers - 1),
                gr.update(choices=heads(n_heads)))

    def download(views: dict, request: gr.Request) -> str:
        return json_file(ctx.session_dir(request) / "anchor-views.json", views)

    lm = ctx.lm
    first = named_all(figures(page.initial_views, lm.n_layers // 2, None, 0.1, "re-weighting"), lm.name, say)
    with gr.Tab(t("anchors.tab")):
        views = page.views
        gr.Markdown(t("anchors.explain"))
        with gr.Row():
            n_prompts = gr.Slider(1, 40, value=cached.DEFAULTS["n_prompts"], step=1, label=t("anchors.prompts"))
            flow_btn = gr.Button(t("anchors.compute"), variant="primary")
            stop = gr.Button(t("cancel"))
        curves = gr.Plot(first[0], label=t("anchors.curves"))
        with gr.Row():
            layer = gr.Slider(0, lm.n_layers - 1, value=lm.n_layers // 2, step=1, label=t("layer"))
            head = gr.Dropdown(heads(lm.n_heads), value=ALL_HEADS, label=t("anchors.heads"))
            threshold = gr.Slider(0.0, 1.0, value=0.1, step=0.05, label=t("anchors.threshold"))
        arcs = gr.Plot(first[1], label=t("anchors.arcs"))
        gr.Markdown(t("anchors.isolation_guide"))
        with gr.Row():
            iso_k = gr.Slider(1, lm.n_layers, value=min(cached.DEFAULTS["k"], lm.n_layers), step=1,
                              label=t("anchors.k"))
            iso_btn = gr.Button(t("anchors.run_isolation"))
        iso_plot = gr.Plot(first[2], label=t("anchors.isolation"))
        gr.Markdown(t("anchors.using_guide"))
        with gr.Row():
            kind = gr.Radio([(t(f"anchors.{k}"), k) for k in cached.EXPERIMENTS], value="re-weighting",
                            label=t("anchors.experiment"))
            n_held = gr.Slider(8, 200, value=cached.DEFAULTS["n_test"], step=1, label=t("held_out"))
            run = gr.Button(t("anchors.run"))
        plot = gr.Plot(first[3], label=t("anchors.plot"))
        with gr.Row():
            export = gr.Button(t("anchors.download"))
            export_file = gr.File(label=t("anchors.file"), interactive=False)
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
