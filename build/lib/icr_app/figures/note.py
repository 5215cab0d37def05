"""A placeholder figure that says, in its middle, why there is nothing to draw yet."""

from __future__ import annotations

import plotly.graph_objects as go


def note_figure(text: str, height: int = 200) -> go.Figure:
    """An axis-free figure holding only `text` (a gr.Plot keeps its place and tells the visitor what to do)."""
    fig = go.Figure()
    fig.add_annotation(text=text, showarrow=False)
    fig.update_layout(xaxis={"visible": False}, yaxis={"visible": False}, height=height)
    return fig
