"""Plotly figures of one query's routing: α(x) per routed layer and PID direction, γ(x) per layer and head.

γ(x) is drawn with the shared layers × heads map (`figures.heads`), every layer on the axis and the unrouted ones
blank, so it lines up with SITE's α map and the other methods' head maps.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from icr_app.figures.heads import head_map
from icr_app.methods.icr.router import ICRRouter


def routing_figures(router: ICRRouter, query: str) -> tuple[go.Figure, go.Figure]:
    """α(x) and γ(x) for one query, from one pass of the encoder and the router.

    An ensemble shows its members' mean α and mean γ (its bias averages each member's γ·α).
    """
    alpha, gamma = router.route([query])
    of = ""
    if alpha.dim() == 4:
        alpha, gamma, of = alpha.mean(1), gamma.mean(1), f" (mean of {alpha.shape[1]} routers)"
    bound = float(router.net.alpha_scale)
    alpha_fig = go.Figure(go.Heatmap(
        z=alpha[0].tolist(), x=list(range(alpha.shape[-1])), y=router.layers, zmin=-bound, zmax=bound,
        colorscale="RdBu", colorbar={"title": "α"},
        hovertemplate="layer %{y}, direction %{x}<br>α = %{z:.3f}<extra></extra>"))
    alpha_fig.update_layout(title=f"α(x){of} for: {query[:60]}", xaxis_title="principal ICL direction",
                            yaxis_title="layer", yaxis={"autorange": "reversed"},
                            margin={"l": 60, "r": 20, "t": 60, "b": 40})
    rows = {layer: row for layer, row in zip(router.layers, gamma[0].tolist())}
    n_heads = gamma.shape[-1]
    full = [rows.get(layer, [math.nan] * n_heads) for layer in range(router.lm.n_layers)]
    return alpha_fig, head_map(full, f"γ(x){of} for: {query[:60]}", "γ")
