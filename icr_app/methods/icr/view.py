"""Plotly views of one query's routing: α(x) per routed layer and PID direction, γ(x) per layer and head."""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.methods.icr.router import ICRRouter


def _heatmap(z: list[list[float]], x: list[str], y: list[str], title: str, zmin: float, zmax: float,
             colorscale: str) -> go.Figure:
    fig = go.Figure(go.Heatmap(z=z, x=x, y=y, zmin=zmin, zmax=zmax, colorscale=colorscale,
                               hovertemplate="%{y}, %{x}: %{z:.3f}<extra></extra>"))
    fig.update_layout(title=title, yaxis={"autorange": "reversed"}, margin={"l": 60, "r": 20, "t": 50, "b": 40})
    return fig


def routing_figures(router: ICRRouter, query: str) -> tuple[go.Figure, go.Figure]:
    """α(x) and γ(x) for one query, from one pass of the encoder and the router.

    α(x): routed layers × PID directions, diverging around 0 (the sign says which way a direction is pushed).
    γ(x): routed layers × heads in [0, 1], how much each head takes the routing bias.
    An ensemble shows its members' mean α and mean γ (its bias averages each member's γ·α).
    """
    alpha, gamma = router.route([query])
    of = ""
    if alpha.dim() == 4:
        alpha, gamma, of = alpha.mean(1), gamma.mean(1), f" (mean of {alpha.shape[1]} routers)"
    bound = float(router.net.alpha_scale)
    layers = [f"L{layer}" for layer in router.layers]
    return (
        _heatmap(alpha[0].tolist(), [f"PID {i}" for i in range(alpha.shape[-1])], layers,
                 f"α(x){of} for: {query[:60]}", -bound, bound, "RdBu"),
        _heatmap(gamma[0].tolist(), [f"H{h}" for h in range(gamma.shape[-1])], layers,
                 f"γ(x){of} for: {query[:60]}", 0.0, 1.0, "Viridis"),
    )
