"""The tab of every method whose spec has a view (`MethodSpec.view`): the visitor's built method for the current
model (a method that needs no build: made for the current task) drawn by the view's figure and summary in the
visitor's language, its artefact as a download, and, when the view offers them, figures of the visitor's query
redrawn with every answer (ICR's α and γ maps), its own Build button and an upload.

A built method lives in the visitor's `built` state (their Build button, a method's own tab, an upload or the
prebuilt files); after a model switch it belongs to a model no longer loaded, so it is not shown.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import gradio as gr

from icr_app import prebuilt
from icr_app.app.context import JOBS, TASKS, AppContext, clip_query, on
from icr_app.app.figures import named
from icr_app.app.i18n import method_title, say, t
from icr_app.app.page import Page, not_built_note
from icr_app.core.paths import resolve
from icr_app.core.tasks import Task
from icr_app.figures.note import note_figure
from icr_app.methods import build_method
from icr_app.methods.base import BuildControl, BuildError, Method, MethodSpec, QueryFigures
from icr_app.methods.state import StatefulMethod


def built_method(ctx: AppContext, built: dict[str, Method], name: str) -> StatefulMethod | None:
    """The visitor's built method `name` (a method with a built state), if it was built for the app's current
    model."""
    method = ctx.built_method(built, name)
    return method if isinstance(method, StatefulMethod) else None


def shown_method(ctx: AppContext, spec: MethodSpec, built: dict[str, Method], task: Task | None
                 ) -> StatefulMethod | None:
    """What the tab draws: the visitor's built method, or, for a method that needs no build (ELICIT: nothing is
    learnt from the task), the one made for the current task now; None when neither is there (no library ships
    for the model, say)."""
    method = built_method(ctx, built, spec.name)
    if method is not None or not spec.instant or task is None:
        return method
    try:
        made = prebuilt.instant_method(ctx.lm, task, spec.name)
    except BuildError:
        return None
    return made if isinstance(made, StatefulMethod) else None


def state_file(method: StatefulMethod, folder: Path) -> Path:
    """The method's artefact written into `folder` (the visitor's private one), named after the method, the model
    it was built on and the task (the file holds the model's fingerprint too)."""
    stem = "-".join(part.replace("/", "_") for part in (method.name, method.lm.name, method.state.meta.task))
    return method.save(folder / f"{stem}.safetensors")


def not_built(name: str, built: dict[str, Method] | None = None) -> str:
    """Why the tab has nothing to draw: not built yet, or dropped with a model the page released."""
    if name in getattr(built, "dropped", {}):
        return f"_{not_built_note(built, name)}_"
    return say("not_built_here", title=method_title(name))


def built_method_tab(ctx: AppContext, page: Page, spec: MethodSpec) -> None:
    """The tab of `spec`'s view: its figure and summary of the visitor's built method (and its `second` figure and
    `notes` beside their other built methods, when it has them), and the artefact, redrawn whenever their built
    methods or the task change (api name "show_<method>"); with a `build` control, its own Build button and an
    upload."""
    view, name = spec.view, spec.name
    if view is None:
        raise ValueError(f"method {name!r} has no view to show in a tab")
    figure = None if view.figure is None else resolve(view.figure)
    summary = resolve(view.summary)
    second = None if view.second is None else resolve(view.second)
    notes = None if view.notes is None else resolve(view.notes)

    def show(built: dict[str, Method], request: gr.Request, task: Task | None = None):
        method = shown_method(ctx, spec, built, task)
        state = None if method is None else method.state
        model = None if method is None else method.lm.name
        shown = [] if figure is None else [None if state is None else named(figure(state, say), model, say)]
        if second is not None:
            shown.append(None if state is None else named(second(state, built, say), model, say))
        shown.append(not_built(name, built) if state is None
                     else f"{summary(state, say)}\n\n{say('fact.model', model=model)}")
        if notes is not None:
            shown.append("" if state is None else notes(state, built, say))
        return *shown, None if method is None else str(state_file(method, ctx.session_dir(request)))

    with gr.Tab(t(f"{view.key}.tab")):
        gr.Markdown(t(f"{view.key}.explain"))
        info = gr.Markdown(not_built(name))
        controls = _build_controls(spec, view.build) if view.build is not None else None
        query_plots = [] if view.query is None else _query_plots(view.query)
        outs = [*([gr.Plot(label=t(f"{view.key}.figure"))] if figure is not None else []),
                *([gr.Plot(label=t(f"{view.key}.second"))] if second is not None else []), info]
        if notes is not None:
            outs.append(gr.Markdown(""))
        with gr.Row():
            outs.append(gr.File(label=t(f"download.{name}"), interactive=False))
            upload = None if view.build is None else gr.File(label=t(view.build.upload), file_types=[".safetensors"],
                                                             type="filepath")
    on(page.built.change, show, [page.built, page.task], outs, f"show_{_api_key(name)}", TASKS, queue=False)
    for event in page.task_changed:
        event.then(show, [page.built, page.task], outs, queue=False)
    if view.build is not None:
        _wire_build(ctx, page, spec, view.build, controls, upload, show, outs)
    if view.query is not None:
        _wire_query(ctx, page, spec, view.query, query_plots)


def _api_key(name: str) -> str:
    return name.replace("-", "_")


def _query_plots(query: QueryFigures) -> list[gr.Plot]:
    first = note_figure(say("after_answers"))  # drawn on page load, after the panels
    with gr.Row():
        return [gr.Plot(first, label=t(label)) for label in query.labels]


def _wire_query(ctx: AppContext, page: Page, spec: MethodSpec, query: QueryFigures, plots: list[gr.Plot]) -> None:
    """The view's figures of the visitor's query, drawn by the method the tab shows: on Ask (api name
    "<method>_maps") and whenever the panels have answered (model work: after them)."""
    figures = resolve(query.figures)

    def draw(built: dict[str, Method], task: Task, text: str) -> tuple:
        method = shown_method(ctx, spec, built, task)
        if method is None:
            return (note_figure(not_built(spec.name, built)),) * len(plots)
        return tuple(named(fig, method.lm.name, say) for fig in figures(method, clip_query(text), say))

    inputs = [page.built, page.task, page.query]
    on(page.ask.click, draw, inputs, plots, f"{_api_key(spec.name)}_maps")
    for event in page.task_answered:
        on(event.then, draw, inputs, plots, False)


def _build_controls(spec: MethodSpec, build: BuildControl) -> tuple[gr.Slider, gr.Button, gr.Button]:
    with gr.Row():
        value = gr.Slider(build.low, build.high, value=getattr(spec.config(), build.field), step=10,
                          label=t(build.label))
        button = gr.Button(t(build.button), variant="primary")
        stop = gr.Button(t("cancel"))
    return value, button, stop


def _wire_build(ctx: AppContext, page: Page, spec: MethodSpec, build: BuildControl,
                controls: tuple[gr.Slider, gr.Button, gr.Button], upload: gr.File, show: Callable, outs: list) -> None:
    """The tab's Build button (api name "build_<method>") and upload ("load_<method>"): each keeps the method in the
    visitor's built methods and redraws the tab."""
    name, key = spec.name, _api_key(spec.name)
    value, button, stop = controls

    def keep(built: dict, task: Task, method: Method, request: gr.Request):
        built = ctx.hold({**built, name: method}, built)
        return built, *show(built, request, task)

    def build_here(task: Task, built: dict, setting: int, seed: int, request: gr.Request,
                   progress: gr.Progress = gr.Progress()):  # noqa: B008
        config = dataclasses.replace(spec.config(), **{build.field: int(setting)})
        step = ctx.progress(progress, request, name, say(build.busy))
        return keep(built, task, build_method(ctx.lm, task, name, config, seed=seed, progress=step), request)

    def load_here(built: dict, task: Task, path: str | None, request: gr.Request):
        if not path:
            raise gr.Error(say("error.no_file"))
        return keep(built, task, spec.load(Path(path), ctx.lm), request)

    on(button.click, build_here, [page.task, page.built, value, page.seed], [page.built, *outs],
       f"build_{key}", JOBS)
    ctx.cancel_button(stop, name)
    on(upload.upload, load_here, [page.built, page.task, upload], [page.built, *outs], f"load_{key}")
