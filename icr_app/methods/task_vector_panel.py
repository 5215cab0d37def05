"""The task vector's tab: the visitor's built task vector (from "Build selected methods"), its layer sweep and file."""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.app.kit import AppContext, Page, built_method_tab
from icr_app.methods.task_vector import TaskVectorMethod, TaskVectorState

EXPLAIN = ("A few-shot prompt makes the model compute, at its last token, a state that already says which task to "
           "do: the demonstrations are compressed into it. The task vector is that state after one block, averaged "
           "over few-shot prompts of the task (each ending in a query that is not one of its demonstrations). On a "
           "zero-shot query it is written over the query's own last-token state at that block, so the layers above "
           "read the task from it and apply it to the query. Too early a block and the query has not been read "
           "yet; too late and the answer is already fixed: the block is chosen on held-out training examples.")


def layer_figure(tv: TaskVectorState) -> go.Figure:
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


def summary(tv: TaskVectorState) -> str:
    m = tv.meta
    return (f"Task vector for **{m.task}**: {m.n_prompts} prompts × {m.n_demos} demos; block {m.layer} chosen on "
            f"{m.n_val} held-out examples (accuracy {float(tv.layer_accuracy[m.layer]):.2f}, zero-shot "
            f"{m.zero_shot_val_accuracy:.2f}); {tv.theta.numel():,} stored numbers; built in {m.build_s:.0f} s")


def build_tab(ctx: AppContext, page: Page) -> None:
    built_method_tab(ctx, page, TaskVectorMethod, "Task vector", EXPLAIN, "validation accuracy per block",
                     layer_figure, summary)
