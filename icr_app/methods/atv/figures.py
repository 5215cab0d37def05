"""What the app shows of a built ATV method: the norm of the vector the generator made for each block and each
of the task's queries (Plotly), and a one-line summary."""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.figures.say import Say
from icr_app.methods.atv.method import AtvState


def norms_figure(state: AtvState, say: Say) -> go.Figure:
    """A heatmap: one row per recorded query, one column per block, the colour its vector's norm."""
    m = state.meta
    fig = go.Figure(go.Heatmap(
        z=state.norms.tolist(), x=list(range(state.norms.shape[1])), y=list(range(len(m.queries))),
        text=[[q[:80]] * state.norms.shape[1] for q in m.queries], colorscale="Viridis",
        colorbar={"title": say("fig.atv.norm")}, hovertemplate=say("fig.atv.hover") + "<extra></extra>"))
    fig.update_layout(title=say("fig.atv.title", task=m.task, n=len(m.queries)), xaxis_title=say("fig.atv.block"),
                      yaxis_title=say("fig.atv.query"), margin={"l": 60, "r": 20, "t": 60, "b": 40})
    return fig


def summary(state: AtvState, say: Say) -> str:
    m, mean = state.meta, state.norms.mean(0)
    domains = m.generator["domains"]
    spread = float((state.norms.std(0) / mean.clamp_min(1e-12)).mean()) if len(m.queries) > 1 else 0.0
    key = "atv.summary.seen" if m.task in domains else "atv.summary.unseen"
    return say(key, task=m.task, n_domains=len(domains), n=len(m.queries), block=int(mean.argmax()),
               norm=float(mean.max()), spread=spread, strength=m.strength)
