"""What the app shows of a built task vector: its layer sweep (Plotly) and a one-line summary."""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.figures.say import Say
from icr_app.methods.task_vector import TaskVectorState


def layer_figure(tv: TaskVectorState, say: Say) -> go.Figure:
    """Validation accuracy of the vector patched after each block; the chosen block starred, zero-shot dashed."""
    acc, prob = tv.layer_accuracy.tolist(), tv.layer_gold_prob.tolist()
    m = tv.meta
    fig = go.Figure(go.Scatter(
        x=list(range(len(acc))), y=acc, customdata=prob, mode="lines+markers", name=say("fig.tv.name"),
        hovertemplate=say("fig.tv.hover") + "<extra></extra>"))
    fig.add_trace(go.Scatter(x=[m.layer], y=[acc[m.layer]], mode="markers", name=say("fig.tv.chosen", layer=m.layer),
                             marker={"symbol": "star", "size": 16}, hoverinfo="skip"))
    fig.add_hline(y=m.zero_shot_val_accuracy, line_dash="dash",
                  annotation_text=say("fig.zero_shot_at", acc=m.zero_shot_val_accuracy))
    fig.update_layout(title=say("fig.tv.title", task=m.task, n=m.n_val), xaxis_title=say("fig.tv.block"),
                      yaxis_title=say("fig.tv.accuracy"), yaxis={"range": [-0.02, 1.02]},
                      margin={"l": 60, "r": 20, "t": 60, "b": 40})
    return fig


def summary(tv: TaskVectorState, say: Say) -> str:
    m = tv.meta
    return say("tv.summary", task=m.task, n_prompts=m.n_prompts, n_demos=m.n_demos, layer=m.layer, n_val=m.n_val,
               acc=float(tv.layer_accuracy[m.layer]), zs=m.zero_shot_val_accuracy, n=tv.theta.numel(), s=m.build_s)
