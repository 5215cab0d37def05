"""LoRA's tab: fine-tune on the visitor's task (progress, Cancel), see the training curve and the trained
parameters beside SITE's, download the adapter or load one."""

from __future__ import annotations

import gradio as gr

from icr_app.app.answers import Page
from icr_app.app.built_tab import built_method, download_file, state_file
from icr_app.app.context import JOBS, AppContext, on
from icr_app.app.i18n import say, t
from icr_app.core.tasks import Task
from icr_app.methods.base import Answering
from icr_app.methods.lora.method import LoraAdapter, LoraMethod, LoraSettings, build_lora
from icr_app.methods.lora.view import parameter_bars, training_curve
from icr_app.methods.site.method import SiteMethod


def summary(adapter: LoraAdapter) -> str:
    m, c, cfg = adapter.meta, adapter.meta.curve, adapter.peft
    best = c.val_step.index(c.best_step)
    return say("lora.summary", task=m.task, n=adapter.n_parameters, r=cfg["r"],
               modules=", ".join(cfg["target_modules"]), steps=len(c.train_loss), best=c.best_step,
               loss=c.val_loss[best], acc=c.val_accuracy[best], s=m.build_s)


def build_tab(ctx: AppContext, page: Page) -> None:
    def show(built: dict, request: gr.Request):
        """Redraw from the visitor's built LoRA (whichever button built it), for the app's current model."""
        method = built_method(ctx, built, LoraMethod)
        if method is None:
            return None, None, say("lora.not_built"), None
        adapter, site = method.state, built_method(ctx, built, SiteMethod)
        path = state_file(method, ctx.session_dir(request))
        site_params = None if site is None else site.trainable_parameters
        return training_curve(adapter), parameter_bars(adapter.n_parameters, site_params), summary(adapter), str(path)

    def keep(built: dict, method: LoraMethod, request: gr.Request):
        built = {**built, "lora": method}
        return built, *show(built, request)

    def train(task: Task, built: dict, steps: int, seed: int, request: gr.Request,
              progress: gr.Progress = gr.Progress()):  # noqa: B008
        lm, settings = ctx.lm, LoraSettings(steps=int(steps))
        adapter = build_lora(lm, task, Answering.of(lm, task), settings, int(seed),
                             ctx.progress(progress, request, "lora", say("lora.training")))
        return keep(built, LoraMethod(lm, adapter), request)

    def upload(built: dict, path: str | None, request: gr.Request):
        if not path:
            raise gr.Error(say("error.no_file"))
        return keep(built, LoraMethod.load(path, ctx.lm), request)

    with gr.Tab(t("lora.tab")):
        gr.Markdown(t("lora.explain"))
        info = gr.Markdown(t("lora.not_built"))
        with gr.Row():
            steps = gr.Slider(0, 400, value=LoraSettings.steps, step=10, label=t("lora.steps"))
            train_btn = gr.Button(t("lora.train"), variant="primary")
            stop = gr.Button(t("cancel"))
        with gr.Row():
            curve = gr.Plot(label=t("lora.curve"))
            params = gr.Plot(label=t("lora.params"))
        with gr.Row():
            download = download_file(LoraMethod)
            upload_file = gr.File(label=t("lora.load"), file_types=[".safetensors"],
                                  type="filepath")
    outs = [curve, params, info, download]
    on(train_btn.click, train, [page.task, page.built, steps, page.seed], [page.built, *outs], "build_lora", JOBS)
    ctx.cancel_button(stop, "lora")
    on(upload_file.upload, upload, [page.built, upload_file], [page.built, *outs], "load_lora")
    # "Build selected methods", a new task and a new model change `built` too: redraw from it then.
    on(page.built.change, show, page.built, outs, False)
