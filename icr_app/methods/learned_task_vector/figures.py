"""What the tab shows of a learned task vector: its layer sweep beside the vector's norm and the residual stream's
(Plotly), and a one-line summary."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from icr_app.figures.say import Say
from icr_app.methods.learned_task_vector.artefact import LearnedTaskVectorState


def sweep_figure(state: LearnedTaskVectorState, say: Say) -> go.Figure:
    """Left: held-out accuracy of the vector trained at each block tried (its loss on hover), the chosen block
    starred, zero-shot dashed. Right: per block tried, the vector's norm beside the mean norm of the residual
    stream it is added to."""
    m, layers = state.meta, state.layers
    acc, loss = state.val_accuracy[layers].tolist(), state.val_loss[layers].tolist()
    fig = make_subplots(rows=1, cols=2, subplot_titles=(say("fig.ltv.sweep"), say("fig.ltv.norms")))
    fig.add_trace(go.Scatter(x=layers, y=acc, customdata=loss, mode="lines+markers", name=say("fig.ltv.name"),
                             hovertemplate=say("fig.ltv.hover") + "<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=[m.layer], y=[float(state.val_accuracy[m.layer])], mode="markers",
                             name=say("fig.ltv.chosen", layer=m.layer), marker={"symbol": "star", "size": 16},
                             hoverinfo="skip"), row=1, col=1)
    fig.add_hline(y=m.zero_shot_val_accuracy, line_dash="dash", row=1, col=1,
                  annotation_text=say("fig.zero_shot_at", acc=m.zero_shot_val_accuracy))
    for name, norms in (("fig.ltv.vector", state.vector_norm), ("fig.ltv.residual", state.residual_norm)):
        fig.add_trace(go.Bar(x=layers, y=norms[layers].tolist(), name=say(name),
                             hovertemplate=say("fig.ltv.norm_hover", name=say(name)) + "<extra></extra>"),
                      row=1, col=2)
    fig.update_xaxes(title_text=say("fig.ltv.block"))
    fig.update_yaxes(title_text=say("fig.ltv.accuracy"), range=[-0.02, 1.02], row=1, col=1)
    fig.update_yaxes(title_text=say("fig.ltv.norm"), row=1, col=2)
    fig.update_layout(title=say("fig.ltv.title", task=m.task, n=m.n_val), barmode="group",
                      margin={"l": 60, "r": 20, "t": 80, "b": 40})
    return fig


def summary(state: LearnedTaskVectorState, say: Say) -> str:
    m = state.meta
    return say("ltv.summary", task=m.task, n_fit=m.n_prompts, steps=m.steps, n_layers=len(state.layers),
               layer=m.layer, n_val=m.n_val, acc=float(state.val_accuracy[m.layer]), zs=m.zero_shot_val_accuracy,
               norm=float(state.vector_norm[m.layer]), residual=float(state.residual_norm[m.layer]),
               strength=m.strength, n=state.vector.numel(), s=m.build_s)
