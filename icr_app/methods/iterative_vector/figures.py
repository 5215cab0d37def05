"""What the tab shows of built iterative vectors: their norms per layer after each update, and per row at the end
(Plotly), and a one-line summary."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from icr_app.figures.say import Say
from icr_app.methods.iterative_vector.artefact import IterativeVectorState


def norm_figure(state: IterativeVectorState, say: Say) -> go.Figure:
    """Left: the query vector's norm per layer (x) after each update (y), how the iteration moves it. Right: every
    row's final norm per layer (the label rows are what the extraction prompts' demonstrations were edited with)."""
    norms, m = state.norms, state.meta
    layers = list(range(norms.shape[1]))
    fig = make_subplots(rows=1, cols=2, column_widths=[0.6, 0.4],
                        subplot_titles=(say("fig.iv.updates"), say("fig.iv.final")))
    fig.add_trace(go.Heatmap(z=norms[:, :, -1].tolist(), x=layers, y=list(range(1, norms.shape[0] + 1)),
                             colorscale="Viridis", colorbar={"title": say("fig.iv.norm"), "x": 0.55},
                             hovertemplate=say("fig.iv.hover_update") + "<extra></extra>"), row=1, col=1)
    for r, name in enumerate(m.rows):
        label = say("fig.iv.query") if r == len(m.rows) - 1 else name
        fig.add_trace(go.Scatter(x=layers, y=norms[-1, :, r].tolist(), mode="lines+markers", name=label,
                                 hovertemplate=say("fig.iv.hover_row", row=label) + "<extra></extra>"), row=1, col=2)
    for col in (1, 2):
        fig.update_xaxes(title_text=say("layer"), row=1, col=col)
    fig.update_yaxes(title_text=say("fig.iv.update"), row=1, col=1)
    fig.update_yaxes(title_text=say("fig.iv.norm"), row=1, col=2)
    fig.update_layout(title=say("fig.iv.title", task=m.task, episodes=m.episodes, updates=norms.shape[0]),
                      margin={"l": 60, "r": 20, "t": 80, "b": 40})
    return fig


def summary(state: IterativeVectorState, say: Say) -> str:
    m = state.meta
    return say("iv.summary", task=m.task, episodes=m.episodes, demos=m.demos, updates=state.norms.shape[0],
               ext=m.extraction_strength, strength=m.strength, n=state.query_vectors.numel(), s=m.build_s)
