"""SITE's tab: its head map for the visitor's task (shipped for the built-in tasks, or built here with progress
and Cancel), and the task as a file to download or to load back."""

from __future__ import annotations

import gradio as gr
import plotly.graph_objects as go

from icr_app.app.answers import Page
from icr_app.app.built_tab import built_method, download_file, state_file
from icr_app.app.context import JOBS, AppContext, on
from icr_app.core.tasks import Task
from icr_app.methods.base import Answering
from icr_app.methods.site.method import SiteConfig, SiteMethod, SiteTask, build_site
from icr_app.methods.site.view import GUIDE, alpha_heatmap
from icr_app.views.note import note_figure

EXPLAIN = ("SITE averages each attention head's output at the last token over many few-shot prompts (the task "
           "embedding), then learns a weight α per head: how much of the embedding replaces the head's zero-shot "
           "output. Heads near 1 carry the task. " + GUIDE)
NOT_BUILT = "_not built for this task yet: press Build SITE_"


def summary(site: SiteTask) -> str:
    m = site.meta
    return (f"SITE for **{m.task}**: {m.n_prompts} prompts × {m.n_demos} demos, {m.objective} objective; "
            f"{m.steps} steps (best {m.best_step}); train loss {m.train_loss:.3f}, val loss {m.val_loss:.3f}; "
            f"built in {m.build_s:.0f} s")


def _empty() -> go.Figure:
    return note_figure("SITE is not built for this task yet")


def build_tab(ctx: AppContext, page: Page) -> None:
    def shown(built: dict, request: gr.Request):
        method = built_method(ctx, built, SiteMethod)
        if method is None:
            return _empty(), NOT_BUILT, None
        path = state_file(method, ctx.session_dir(request))
        return alpha_heatmap(method.state), summary(method.state), str(path)

    def build(task: Task, built: dict, steps: int, seed: int, request: gr.Request,
              progress: gr.Progress = gr.Progress()):  # noqa: B008
        lm = ctx.lm
        step = ctx.progress(progress, request, "site", "building SITE")
        site = build_site(lm, task, Answering.of(lm, task), SiteConfig(steps=int(steps)), int(seed), step)
        built = {**built, "site": SiteMethod(lm, site)}
        return built, *shown(built, request)

    def upload(built: dict, path: str | None, request: gr.Request):
        if not path:
            raise gr.Error("no file uploaded")
        built = {**built, "site": SiteMethod.load(path, ctx.lm)}
        return built, *shown(built, request)

    with gr.Tab("SITE head map"):
        gr.Markdown(EXPLAIN)
        with gr.Row():
            steps = gr.Slider(20, 400, value=SiteConfig.steps, step=10, label="training steps")
            build_btn = gr.Button("Build SITE", variant="primary")
            stop = gr.Button("Cancel")
        info = gr.Markdown(NOT_BUILT)
        head_map = gr.Plot(_empty(), label="α per layer and head")
        with gr.Row():
            download = download_file(SiteMethod)
            upload_file = gr.File(label="load a SITE task (.safetensors)", file_types=[".safetensors"],
                                  type="filepath")
    outs = [head_map, info, download]
    on(build_btn.click, build, [page.task, page.built, steps, page.seed], [page.built, *outs], "build_site", JOBS)
    ctx.cancel_button(stop, "site")
    on(upload_file.upload, upload, [page.built, upload_file], [page.built, *outs], "load_site")
    for event in page.task_changed:
        event.then(shown, page.built, outs, queue=False)
