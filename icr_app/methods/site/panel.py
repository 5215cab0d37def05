"""SITE's tab: its head map for the visitor's task (shipped for the built-in tasks, or built here with progress
and Cancel), and the task as a file to download or to load back."""

from __future__ import annotations

import gradio as gr
import plotly.graph_objects as go

from icr_app.app.answers import Page
from icr_app.app.built_tab import built_method, download_file, state_file
from icr_app.app.context import JOBS, AppContext, on
from icr_app.app.i18n import say, t
from icr_app.core.tasks import Task
from icr_app.methods.base import Answering
from icr_app.methods.site.method import SiteConfig, SiteMethod, SiteTask, build_site
from icr_app.methods.site.view import alpha_heatmap
from icr_app.views.note import note_figure


def summary(site: SiteTask) -> str:
    m = site.meta
    return say("site.summary", task=m.task, n_prompts=m.n_prompts, n_demos=m.n_demos, objective=m.objective,
               steps=m.steps, best=m.best_step, train=m.train_loss, val=m.val_loss, s=m.build_s)


def _empty() -> go.Figure:
    return note_figure(say("site.empty"))


def build_tab(ctx: AppContext, page: Page) -> None:
    def shown(built: dict, request: gr.Request):
        method = built_method(ctx, built, SiteMethod)
        if method is None:
            return _empty(), say("site.not_built"), None
        path = state_file(method, ctx.session_dir(request))
        return alpha_heatmap(method.state), summary(method.state), str(path)

    def build(task: Task, built: dict, steps: int, seed: int, request: gr.Request,
              progress: gr.Progress = gr.Progress()):  # noqa: B008
        lm = ctx.lm
        step = ctx.progress(progress, request, "site", say("site.building"))
        site = build_site(lm, task, Answering.of(lm, task), SiteConfig(steps=int(steps)), int(seed), step)
        built = {**built, "site": SiteMethod(lm, site)}
        return built, *shown(built, request)

    def upload(built: dict, path: str | None, request: gr.Request):
        if not path:
            raise gr.Error(say("error.no_file"))
        built = {**built, "site": SiteMethod.load(path, ctx.lm)}
        return built, *shown(built, request)

    with gr.Tab(t("site.tab")):
        gr.Markdown(t("site.explain"))
        with gr.Row():
            steps = gr.Slider(20, 400, value=SiteConfig.steps, step=10, label=t("site.steps"))
            build_btn = gr.Button(t("site.build"), variant="primary")
            stop = gr.Button(t("cancel"))
        info = gr.Markdown(t("site.not_built"))
        head_map = gr.Plot(_empty(), label=t("site.map"))
        with gr.Row():
            download = download_file(SiteMethod)
            upload_file = gr.File(label=t("site.load"), file_types=[".safetensors"],
                                  type="filepath")
    outs = [head_map, info, download]
    on(build_btn.click, build, [page.task, page.built, steps, page.seed], [page.built, *outs], "build_site", JOBS)
    ctx.cancel_button(stop, "site")
    on(upload_file.upload, upload, [page.built, upload_file], [page.built, *outs], "load_site")
    for event in page.task_changed:
        event.then(shown, page.built, outs, queue=False)
