"""What the tabs of stateful methods share: the visitor's built method for the current model, its artefact as a
download, and a whole tab for a method built with "Build selected methods" (a figure, a summary, the file).

A built method lives in the visitor's `built` state (their Build button, a method's own tab, an upload or the
prebuilt files); after a model switch it belongs to a model no longer loaded, so it is not shown.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import gradio as gr
import plotly.graph_objects as go
from gradio.i18n import I18nData

from icr_app.app.context import JOBS, TASKS, AppContext, on
from icr_app.app.i18n import method_title, say, t
from icr_app.app.page import Page
from icr_app.core.tasks import Task
from icr_app.figures.say import Say
from icr_app.methods import REGISTRY, build_method
from icr_app.methods.base import Method
from icr_app.methods.state import BuiltState, StatefulMethod


def built_method(ctx: AppContext, built: dict[str, Method], kind: type[StatefulMethod]) -> StatefulMethod | None:
    """The visitor's built method of this class, if it was built for the app's current model."""
    method = built.get(kind.name)
    return method if isinstance(method, kind) and method.lm is ctx.lm else None


def state_file(method: StatefulMethod, folder: Path) -> Path:
    """The method's artefact written into `folder` (the visitor's private one), named after the method and task."""
    return method.save(folder / f"{method.name}-{method.state.meta.task.replace('/', '_')}.safetensors")


def download_file(kind: type[StatefulMethod]) -> gr.File:
    return gr.File(label=t(f"download.{kind.name}"), interactive=False)


def not_built(kind: type[StatefulMethod]) -> str:
    return say("not_built_here", title=method_title(kind.name))


@dataclass(frozen=True)
class TabBuild:
    """A tab's own Build button: one config field (`field`, e.g. "steps") set by a slider, the method built on the
    visitor's task through `build_method` with progress (`busy`, a string key) and Cancel; and a file upload
    that loads a built one."""

    field: str
    label: I18nData
    low: int
    high: int
    button: I18nData
    upload: I18nData
    busy: str


@dataclass(frozen=True)
class TabFigure:
    """A second figure of a tab, drawn from the built state and the visitor's other built methods."""

    label: I18nData
    draw: Callable[[BuiltState, dict[str, Method]], go.Figure]


def built_method_tab(ctx: AppContext, page: Page, kind: type[StatefulMethod], title: I18nData, explain: I18nData,
                     figure_label: I18nData, figure: Callable[[BuiltState, Say], go.Figure],
                     summary: Callable[[BuiltState], str],
                     notes: Callable[[BuiltState, dict[str, Method]], str] | None = None,
                     second: TabFigure | None = None, build: TabBuild | None = None) -> None:
    """A tab showing the visitor's built `kind` (its state's `figure`, drawn with `say` in the visitor's language,
    and `summary`, the `second` figure and `notes` on it beside the other built methods when given) and offering its
    artefact, redrawn whenever their built methods or the task change (api name "show_<method>"); with `build`, its
    own Build button and an upload."""
    key = kind.name.replace("-", "_")

    def show(built: dict[str, Method], request: gr.Request):
        method = built_method(ctx, built, kind)
        state = None if method is None else method.state
        shown = [None if state is None else figure(state, say)]
        if second is not None:
            shown.append(None if state is None else second.draw(state, built))
        shown.append(not_built(kind) if state is None else summary(state))
        if notes is not None:
            shown.append("" if state is None else notes(state, built))
        return *shown, None if method is None else str(state_file(method, ctx.session_dir(request)))

    with gr.Tab(title):
        gr.Markdown(explain)
        info = gr.Markdown(not_built(kind))
        controls = _build_controls(kind, build) if build is not None else None
        outs = [gr.Plot(label=figure_label), *([gr.Plot(label=second.label)] if second is not None else []), info]
        if notes is not None:
            outs.append(gr.Markdown(""))
        with gr.Row():
            outs.append(download_file(kind))
            upload = None if build is None else gr.File(label=build.upload, file_types=[".safetensors"],
                                                        type="filepath")
    on(page.built.change, show, page.built, outs, f"show_{key}", TASKS, queue=False)
    for event in page.task_changed:
        event.then(show, page.built, outs, queue=False)
    if build is not None:
        _wire_build(ctx, page, kind, build, controls, upload, show, outs)


def _build_controls(kind: type[StatefulMethod], build: TabBuild) -> tuple[gr.Slider, gr.Button, gr.Button]:
    with gr.Row():
        value = gr.Slider(build.low, build.high, value=getattr(REGISTRY[kind.name].config(), build.field), step=10,
                          label=build.label)
        button = gr.Button(build.button, variant="primary")
        stop = gr.Button(t("cancel"))
    return value, button, stop


def _wire_build(ctx: AppContext, page: Page, kind: type[StatefulMethod], build: TabBuild,
                controls: tuple[gr.Slider, gr.Button, gr.Button], upload: gr.File, show: Callable, outs: list) -> None:
    """The tab's Build button (api name "build_<method>") and upload ("load_<method>"): each keeps the method in the
    visitor's built methods and redraws the tab."""
    name, key = kind.name, kind.name.replace("-", "_")
    value, button, stop = controls

    def keep(built: dict, method: Method, request: gr.Request):
        built = {**built, name: method}
        return built, *show(built, request)

    def build_here(task: Task, built: dict, setting: int, seed: int, request: gr.Request,
                   progress: gr.Progress = gr.Progress()):  # noqa: B008
        config = dataclasses.replace(REGISTRY[name].config(), **{build.field: int(setting)})
        step = ctx.progress(progress, request, name, say(build.busy))
        return keep(built, build_method(ctx.lm, task, name, config, seed=seed, progress=step), request)

    def load_here(built: dict, path: str | None, request: gr.Request):
        if not path:
            raise gr.Error(say("error.no_file"))
        return keep(built, kind.load(path, ctx.lm), request)

    on(button.click, build_here, [page.task, page.built, value, page.seed], [page.built, *outs],
       f"build_{key}", JOBS)
    ctx.cancel_button(stop, name)
    on(upload.upload, load_here, [page.built, upload], [page.built, *outs], f"load_{key}")
