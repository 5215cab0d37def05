"""What the app shows of a built state vector: per layer, the validation accuracy with the layers up to it edited
and how far the refinement moved that layer's vector from the plain average (Plotly), and a one-line summary."""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.figures.say import Say
from icr_app.methods.state_vector.method import StateVectorState

MODES = {"average": "fig.sv.average", "inner": "fig.sv.inner", "momentum": "fig.sv.momentum",
         "divide-conquer": "fig.sv.divide_conquer"}  # a mode's name in the reader's language


def layer_figure(sv: StateVectorState, say: Say) -> go.Figure:
    """Accuracy with layers 0..l edited (left axis; the chosen n starred, zero-shot dashed) and the refinement's
    relative shift of layer l's vector (right axis)."""
    acc, prob, shift = sv.layer_accuracy.tolist(), sv.layer_gold_prob.tolist(), sv.shift.tolist()
    m = sv.meta
    layers = list(range(len(acc)))
    fig = go.Figure(go.Scatter(x=layers, y=acc, customdata=prob, mode="lines+markers", name=say("fig.sv.name"),
                               hovertemplate=say("fig.sv.hover") + "<extra></extra>"))
    fig.add_trace(go.Scatter(x=[m.n_layers - 1], y=[acc[m.n_layers - 1]], mode="markers", hoverinfo="skip",
                             name=say("fig.sv.chosen", n=m.n_layers), marker={"symbol": "star", "size": 16}))
    fig.add_trace(go.Bar(x=layers, y=shift, yaxis="y2", opacity=0.35,
                         name=say("fig.sv.shift_name", mode=say(MODES[m.mode])),
                         hovertemplate=say("fig.sv.shift_hover") + "<extra></extra>"))
    fig.add_hline(y=m.zero_shot_val_accuracy, line_dash="dash",
                  annotation_text=say("fig.zero_shot_at", acc=m.zero_shot_val_accuracy))
    fig.update_layout(title=say("fig.sv.title", task=m.task, n=m.n_val), xaxis_title=say("fig.sv.layer"),
                      yaxis={"title": say("fig.sv.accuracy"), "range": [-0.02, 1.02]},
                      yaxis2={"title": say("fig.sv.shift"), "overlaying": "y", "side": "right", "rangemode": "tozero"},
                      legend={"orientation": "h", "y": -0.2}, margin={"l": 60, "r": 60, "t": 60, "b": 40})
    return fig


def summary(sv: StateVectorState, say: Say) -> str:
    m = sv.meta
    return say("sv.summary", task=m.task, mode=say(MODES[m.mode]), n_prompts=m.n_prompts, n_demos=m.n_demos,
               n=m.n_layers, n_val=m.n_val, acc=float(sv.layer_accuracy[m.n_layers - 1]), zs=m.zero_shot_val_accuracy,
               shift=float(sv.shift[:m.n_layers].mean()), size=m.n_layers * sv.vector[0].numel(), s=m.build_s)
