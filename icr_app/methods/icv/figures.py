"""What the tab shows of a built ICV: validation accuracy for each λ of the sweep, the chosen one marked (Plotly),
and a one-line summary."""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.figures.say import Say
from icr_app.methods.icv.method import ICVState


def sweep_figure(state: ICVState, say: Say) -> go.Figure:
    """Validation accuracy per λ (λ = 0 is zero-shot); hover adds the tiebreak; the chosen λ is a red star."""
    m = state.meta
    x = [r["strength"] for r in m.sweep]
    tiebreak = say("fig.gold_probability") if m.kind == "classification" else say("fig.first_token_accuracy")
    fig = go.Figure(go.Scatter(
        x=x, y=[r["accuracy"] for r in m.sweep], mode="lines+markers", name=say("fig.val_accuracy"),
        customdata=[r["tiebreak"] for r in m.sweep],
        hovertemplate=say("fig.icv.hover", tiebreak=tiebreak) + "<extra></extra>"))
    chosen = next(r for r in m.sweep if r["strength"] == m.strength)
    fig.add_trace(go.Scatter(
        x=[chosen["strength"]], y=[chosen["accuracy"]], mode="markers", name=say("fig.icv.chosen", strength=m.strength),
        marker={"symbol": "star", "size": 16, "color": "#d62728"},
        hovertemplate=say("fig.icv.chosen_hover") + "<extra></extra>"))
    fig.update_layout(title=say("fig.icv.title", task=m.task, n=m.n_val, direction=m.direction, site=m.site),
                      xaxis_title=say("fig.icv.strength"), yaxis_title=say("fig.val_accuracy"),
                      yaxis={"range": [-0.02, 1.02]}, margin={"l": 60, "r": 20, "t": 60, "b": 40})
    return fig


def summary(state: ICVState, say: Say) -> str:
    m = state.meta
    return say("icv.summary", task=m.task, n_demos=m.n_demos, strength=m.strength, n_val=m.n_val, s=m.build_s)
