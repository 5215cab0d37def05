"""What the tab shows of a built ICV: validation accuracy for each λ of the sweep, the chosen one marked (Plotly),
and a one-line summary."""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.methods.icv.method import ICVState


def sweep_figure(state: ICVState) -> go.Figure:
    """Validation accuracy per λ (λ = 0 is zero-shot); hover adds the tiebreak; the chosen λ is a red star."""
    m = state.meta
    x = [r["strength"] for r in m.sweep]
    tiebreak = "mean gold-label probability" if m.kind == "classification" else "first-token accuracy"
    fig = go.Figure(go.Scatter(
        x=x, y=[r["accuracy"] for r in m.sweep], mode="lines+markers", name="validation accuracy",
        customdata=[r["tiebreak"] for r in m.sweep],
        hovertemplate=f"λ = %{{x}}<br>accuracy %{{y:.3f}}<br>{tiebreak} %{{customdata:.3f}}<extra></extra>"))
    chosen = next(r for r in m.sweep if r["strength"] == m.strength)
    fig.add_trace(go.Scatter(
        x=[chosen["strength"]], y=[chosen["accuracy"]], mode="markers", name=f"chosen λ = {m.strength:g}",
        marker={"symbol": "star", "size": 16, "color": "#d62728"},
        hovertemplate="chosen λ = %{x}<br>accuracy %{y:.3f}<extra></extra>"))
    fig.update_layout(title=f"ICV strength sweep for {m.task} on {m.n_val} validation examples ({m.direction}, "
                            f"{m.site} output)", xaxis_title="λ (strength)", yaxis_title="validation accuracy",
                      yaxis={"range": [-0.02, 1.02]}, margin={"l": 60, "r": 20, "t": 60, "b": 40})
    return fig
