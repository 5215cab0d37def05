"""The task vector's tab: the visitor's built task vector (from "Build selected methods"), its layer sweep and file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import gradio as gr
import plotly.graph_objects as go

from icr_app.app.answers import Page
from icr_app.app.context import AppContext
from icr_app.methods.base import Method
from icr_app.methods.task_vector import TaskVector, TaskVectorMethod

EXPLAIN = ("A few-shot prompt makes the model compute, at its last token, a state that already says which task to "
           "do: the demonstrations are compressed into it. The task vector is that state after one block, averaged "
           "over few-shot prompts of the task (each ending in a query that is not one of its demonstrations). On a "
           "zero-shot query it is written over the query's own last-token state at that block, so the layers above "
           "read the task from it and apply it to the query. Too early a block and the query has not been read "
           "yet; too late and the answer is already fixed: the block is chosen on held-out training examples.")


def layer_figure(tv: TaskVector) -> go.Figure:
    """Validation accuracy of the vector patched after each block; the chosen block starred, zero-shot dashed."""
    acc, prob = tv.layer_accuracy.tolist(), tv.layer_gold_prob.tolist()
    m = tv.meta
    fig = go.Figure(go.Scatter(
        x=list(range(len(acc))), y=acc, customdata=prob, mode="lines+markers", name="task vector",
        hovertemplate="block %{x}<br>accuracy %{y:.2f}<br>mean gold probability %{customdata:.3f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[m.layer], y=[acc[m.layer]], mode="markers", name=f"chosen: block {m.layer}",
                             marker={"symbol": "star", "size": 16}, hoverinfo="skip"))
    fig.add_hline(y=m.zero_shot_val_accuracy, line_dash="dash",
                  annotation_text=f"zero-shot {m.zero_shot_val_accuracy:.2f}")
    fig.update_layout(title=f"Task vector for {m.task}: accuracy on {m.n_val} held-out examples per block",
                      xaxis_title="block whose output is replaced at the last token",
                      yaxis_title="validation accuracy (first token)", yaxis={"range": [-0.02, 1.02]},
                      margin={"l": 60, "r": 20, "t": 60, "b": 40})
    return fig


def summary(tv: TaskVector, build_s: float) -> str:
    m = tv.meta
    return (f"Task vector for **{m.task}**: {m.n_prompts} prompts × {m.n_demos} demos; block {m.layer} chosen on "
            f"{m.n_val} held-out examples (accuracy {float(tv.layer_accuracy[m.layer]):.2f}, zero-shot "
            f"{m.zero_shot_val_accuracy:.2f}); {tv.theta.numel():,} stored numbers; built in {build_s:.0f} s")


Render = Callable[[Method, dict, Path], tuple]


def method_tab(ctx: AppContext, page: Page, name: str, title: str, explain: str, figure_label: str, file_label: str,
               render: Render, notes: bool = False) -> None:
    """A tab that shows the visitor's built method `name` and offers its artefact, redrawn whenever their built
    methods change. `render(method, built, folder)` -> (figure, summary[, notes], path of the artefact it wrote
    into the visitor's private folder)."""
    empty = "_not built for this task yet: choose it above and press “Build selected methods”_"

    def show(built: dict, request: gr.Request):
        method = built.get(name)
        if method is None:
            return (None, empty, "", None) if notes else (None, empty, None)
        return render(method, built, ctx.session_dir(request))

    with gr.Tab(title):
        gr.Markdown(explain)
        info = gr.Markdown(empty)
        outputs = [gr.Plot(label=figure_label), info]
        if notes:
            outputs.append(gr.Markdown(""))
        outputs.append(gr.File(label=file_label, interactive=False))
    page.built.change(show, page.built, outputs, queue=False)


def render(method: TaskVectorMethod, _built: dict, folder: Path) -> tuple:
    tv = method.built
    path = tv.save(folder / f"task-vector-{tv.meta.task.replace('/', '_')}.safetensors")
    return layer_figure(tv), summary(tv, method.build_s or tv.meta.build_s), str(path)


def build_tab(ctx: AppContext, page: Page) -> None:
    method_tab(ctx, page, "task-vector", "Task vector", EXPLAIN, "validation accuracy per block",
               "download this task vector (safetensors)", render)
