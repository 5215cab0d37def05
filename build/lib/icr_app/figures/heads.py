"""One heat map for anything measured per layer and head, so SITE's α and other methods' head scores share axes.

Layer 0 is at the top, heads run left to right, every cell shows its value on hover, and a map of weights in
[0, 1] always uses the same colour scale, so two maps can be compared at a glance.
"""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.figures.say import Say

WEIGHT_SCALE = "Viridis"


def head_map(z: list[list[float]], say: Say, title: str, value: str, zmin: float | None = 0.0, zmax: float | None = 1.0,
             colorscale: str = WEIGHT_SCALE, extra: list[list[float]] | None = None, extra_name: str = "") -> go.Figure:
    """Layers × heads; `extra` adds a second per-cell number to the hover text (e.g. an embedding's norm)."""
    n_heads = len(z[0]) if z else 0
    hover = say("fig.layer_head_value", value=value)
    if extra is not None:
        hover += f"<br>{extra_name} = %{{customdata:.2f}}"
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(n_heads)), y=list(range(len(z))), zmin=zmin, zmax=zmax, colorscale=colorscale,
        customdata=extra, colorbar={"title": value}, hovertemplate=hover + "<extra></extra>",
    ))
    fig.update_layout(title=title, xaxis_title=say("fig.head"), yaxis_title=say("layer"),
                      yaxis={"autorange": "reversed"}, margin={"l": 60, "r": 20, "t": 60, "b": 40})
    return fig
