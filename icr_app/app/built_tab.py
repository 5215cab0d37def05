"""What the tabs of stateful methods share: the visitor's built method for the current model, its artefact as a
download, and a whole tab for a method built with "Build selected methods" (a figure, a summary, the file).

A built method lives in the visitor's `built` state (their Build button, a method's own tab, an upload or the
prebuilt files); after a model switch it belongs to a model no longer loaded, so it is not shown.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import gradio as gr
import plotly.graph_objects as go
from gradio.i18n import I18nData

from icr_app.app.answers import Page
from icr_app.app.context import TASKS, AppContext, on
from icr_app.app.i18n import say, t
from icr_app.methods.base import Method
from icr_app.methods.state import BuiltState, StatefulMethod, save_method


def built_method(ctx: AppContext, built: dict[str, Method], kind: type[StatefulMethod]) -> StatefulMethod | None:
    """The visitor's built method of this class, if it was built for the app's current model."""
    method = built.get(kind.name)
    return method if isinstance(method, kind) and method.lm is ctx.lm else None


def state_file(method: StatefulMethod, folder: Path) -> Path:
    """The method's artefact written into `folder` (the visitor's private one), named after the method and task."""
    return save_method(method, folder / f"{method.name}-{method.state.meta.task.replace('/', '_')}.safetensors")


def download_file(kind: type[StatefulMethod]) -> gr.File:
    return gr.File(label=t(f"download.{kind.name}"), interactive=False)


def not_built(kind: type[StatefulMethod]) -> str:
    return say("not_built_here", title=say(f"method.{kind.name}"))


def built_method_tab(ctx: AppContext, page: Page, kind: type[StatefulMethod], title: I18nData, explain: I18nData,
                     figure_label: I18nData, figure: Callable[[BuiltState], go.Figure],
                     summary: Callable[[BuiltState], str],
                     notes: Callable[[BuiltState, dict[str, Method]], str] | None = None) -> None:
    """A tab showing the visitor's built `kind` (its state's `figure` and `summary`, and `notes` on it beside the
    other built methods when given) and offering its artefact, redrawn whenever their built methods or the task
    change (api name "<method>_view")."""
    def show(built: dict[str, Method], request: gr.Request):
        method = built_method(ctx, built, kind)
        if method is None:
            empty = not_built(kind)
            return (None, empty, None) if notes is None else (None, empty, "", None)
        shown = [figure(method.state), summary(method.state)]
        if notes is not None:
            shown.append(notes(method.state, built))
        return *shown, str(state_file(method, ctx.session_dir(request)))

    with gr.Tab(title):
        gr.Markdown(explain)
        info = gr.Markdown(not_built(kind))
        outs = [gr.Plot(label=figure_label), info]
        if notes is not None:
            outs.append(gr.Markdown(""))
        outs.append(download_file(kind))
    on(page.built.change, show, page.built, outs, f"{kind.name.replace('-', '_')}_view", TASKS, queue=False)
    for event in page.task_changed:
        event.then(show, page.built, outs, queue=False)
