"""SITE's tab: build it on the visitor's task (with progress and Cancel), see its head map, download or load it."""

from __future__ import annotations

import gradio as gr

from icr_app.app.answers import Page
from icr_app.app.context import JOBS, AppContext, on
from icr_app.core.tasks import Task
from icr_app.methods.base import Answering
from icr_app.methods.site.artefact import load_site, save_site
from icr_app.methods.site.method import SiteConfig, SiteMethod, SiteTask, build_site
from icr_app.methods.site.view import alpha_heatmap

EXPLAIN = ("SITE averages each attention head's output at the last token over many few-shot prompts (the task "
           "embedding), then learns a weight α per head: how much of the embedding replaces the head's zero-shot "
           "output. Heads near 1 carry the task.")
NOT_BUILT = "_not built for this task yet_"


def summary(site: SiteTask) -> str:
    m = site.meta
    return (f"SITE for **{m.task}**: {m.n_prompts} prompts × {m.n_demos} demos; {m.steps} steps "
            f"(best {m.best_step}); train loss {m.train_loss:.3f}, val loss {m.val_loss:.3f}; "
            f"built in {m.build_s:.0f} s")


def build_tab(ctx: AppContext, page: Page) -> None:
    lm = ctx.lm

    def with_site(built: dict, site: SiteTask) -> dict:
        method = SiteMethod(lm, site)
        method.build_s = site.meta.build_s
        return {**built, "site": method}

    def build(task: Task, built: dict, steps: int, seed: int, request: gr.Request,
              progress: gr.Progress = gr.Progress()):  # noqa: B008
        step = ctx.progress(progress, request, "site", "building SITE")
        site = build_site(lm, task, Answering.of(lm, task), SiteConfig(steps=int(steps)), int(seed), step)
        path = save_site(site, ctx.session_dir(request) / f"site-{site.meta.task.replace('/', '_')}.safetensors")
        return with_site(built, site), alpha_heatmap(site), summary(site), str(path)

    def upload(built: dict, path: str | None):
        if not path:
            raise gr.Error("no file uploaded")
        site = load_site(path, lm)
        return with_site(built, site), alpha_heatmap(site), summary(site)

    with gr.Tab("SITE head map"):
        gr.Markdown(EXPLAIN)
        with gr.Row():
            steps = gr.Slider(20, 400, value=SiteConfig.steps, step=10, label="training steps")
            build_btn = gr.Button("Build SITE", variant="primary")
            stop = gr.Button("Cancel")
        info = gr.Markdown(NOT_BUILT)
        head_map = gr.Plot(label="α per layer and head")
        with gr.Row():
            download = gr.File(label="download this SITE task (safetensors)", interactive=False)
            upload_file = gr.File(label="load a SITE task (.safetensors)", file_types=[".safetensors"],
                                  type="filepath")
    on(build_btn.click, build, [page.task, page.built, steps, page.seed], [page.built, head_map, info, download],
       "build_site", JOBS)
    ctx.cancel_button(stop, "site")
    on(upload_file.upload, upload, [page.built, upload_file], [page.built, head_map, info], "load_site")
    for event in page.task_changed:
        event.then(lambda: NOT_BUILT, None, info, queue=False)
