"""What the app shows of a built ELICIT method: per query of its task, the entry picked and its score (Plotly),
and a one-line summary."""

from __future__ import annotations

from collections import Counter

import plotly.graph_objects as go

from icr_app.figures.say import Say
from icr_app.methods.elicit.method import ElicitState


def _picked(state: ElicitState) -> list[tuple[int, str, float, bool]]:
    """(query number, entry name, score, injected) for each recorded query."""
    m, names = state.meta, state.meta.library["entries"]
    return [(i, names[int(p)], float(s), float(s) >= m.threshold)
            for i, (p, s) in enumerate(zip(state.picks.tolist(), state.scores.tolist()))]


def picks_figure(state: ElicitState, say: Say) -> go.Figure:
    """One marker per query at its best entry's score, coloured by entry; hollow below the threshold (declined)."""
    m, rows = state.meta, _picked(state)
    fig = go.Figure()
    for name in dict.fromkeys(name for _, name, _, _ in rows):
        for injected in (True, False):
            mine = [(i, s) for i, n, s, used in rows if n == name and used == injected]
            if not mine:
                continue
            label = name if injected else say("fig.elicit.declined", entry=name)
            fig.add_trace(go.Scatter(
                x=[i for i, _ in mine], y=[s for _, s in mine], mode="markers", name=label,
                text=[m.queries[i][:80] for i, _ in mine],
                marker={"size": 10, "symbol": "circle" if injected else "circle-open"},
                hovertemplate=say("fig.elicit.hover", entry=name) + "<extra></extra>"))
    fig.add_hline(y=m.threshold, line_dash="dash",
                  annotation_text=say("fig.elicit.threshold", threshold=m.threshold, recall=m.recall))
    fig.update_layout(title=say("fig.elicit.title", task=m.task, n=len(rows)), xaxis_title=say("fig.elicit.query"),
                      yaxis_title=say("fig.elicit.score"), yaxis={"range": [-0.02, 1.02]},
                      margin={"l": 60, "r": 20, "t": 60, "b": 40})
    return fig


def summary(state: ElicitState, say: Say) -> str:
    m, rows = state.meta, _picked(state)
    used = [name for _, name, _, injected in rows if injected]
    top, count = Counter(used).most_common(1)[0] if used else ("-", 0)
    return say("elicit.summary", task=m.task, n_entries=len(m.library["entries"]), injected=len(used), n=len(rows),
               top=top, count=count, threshold=m.threshold, recall=m.recall, strength=m.strength)
