"""Plotly view of a SITE task: the learned head selection α (layers × heads)."""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.site import SiteTask


def alpha_heatmap(site: SiteTask) -> go.Figure:
    """α = sigmoid(θ) per layer and head in [0, 1]; hover shows layer, head, α and the embedding's norm."""
    alpha = site.alpha
    norms = site.t.norm(dim=-1)
    n_layers, n_heads = alpha.shape
    meta = site.meta
    fig = go.Figure(go.Heatmap(
        z=alpha.tolist(), x=list(range(n_heads)), y=list(range(n_layers)), zmin=0.0, zmax=1.0,
        colorscale="Viridis", customdata=norms.tolist(), colorbar={"title": "α"},
        hovertemplate="layer %{y}, head %{x}<br>α = %{z:.3f}<br>|t| = %{customdata:.2f}<extra></extra>",
    ))
    near_binary = float(((alpha < 0.1) | (alpha > 0.9)).float().mean())
    fig.update_layout(
        title=f"SITE head selection for {meta.task}: mean α {float(alpha.mean()):.2f}, "
              f"{near_binary:.0%} of heads near 0 or 1",
        xaxis_title="head", yaxis_title="layer", yaxis={"autorange": "reversed"},
        margin={"l": 60, "r": 20, "t": 50, "b": 40},
    )
    return fig
