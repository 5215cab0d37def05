"""Figures for the side-by-side answers and the evaluation table."""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.evaluation import EvalReport
from icr_app.figures.say import Say


def named(fig: go.Figure | None, model: str, say: Say) -> go.Figure | None:
    """`fig` with the model that made it under its title, so that a figure says whose it is on the page and when
    downloaded from it (a page's visitors are on models of their own)."""
    if fig is None:
        return None
    title = fig.layout.title.text
    line = f"<sup>{say('fact.model', model=model)}</sup>"
    fig.update_layout(title_text=line if not title else f"{title}<br>{line}")
    if title and fig.layout.margin.t is not None and fig.layout.margin.t < 80:
        fig.update_layout(margin_t=80)  # room for the second line
    return fig


def named_all(shown: tuple, model: str, say: Say) -> tuple:
    """`shown` with every figure in it `named` (the rest, such as a note's text, as it is)."""
    return tuple(named(x, model, say) if isinstance(x, go.Figure) else x for x in shown)


def label_prob_bars(probs: dict[str, float] | None, title: str, note: str, say: Say) -> go.Figure:
    """Horizontal bars of the label probabilities; an empty figure saying why (`note`) when there are none."""
    fig = go.Figure()
    if probs:
        labels = sorted(probs, key=probs.get)
        fig.add_bar(x=[probs[k] for k in labels], y=labels, orientation="h",
                    text=[f"{probs[k]:.2f}" for k in labels], textposition="auto",
                    hovertemplate="%{y}: %{x:.3f}<extra></extra>")
        fig.update_xaxes(range=[0, 1], title=say("bars.axis"))
    else:
        fig.add_annotation(text=note, showarrow=False)
        fig.update_xaxes(visible=False)
        fig.update_yaxes(visible=False)
    fig.update_layout(title=title, height=220, margin=dict(l=10, r=10, t=40, b=10))
    return fig


def eval_bars(report: EvalReport, say: Say) -> go.Figure:
    """Accuracy per method with its 95% interval as whiskers, the latency ratio to zero-shot in the labels."""
    names = [n for n, r in report.methods.items() if r.error is None]
    res = [report.methods[n] for n in names]
    ratios = [r.latency_ratio_to_zero_shot or float("nan") for r in res]
    fig = go.Figure(go.Bar(
        x=names, y=[r.accuracy for r in res],
        error_y=dict(type="data", symmetric=False, array=[r.ci95[1] - r.accuracy for r in res],
                     arrayminus=[r.accuracy - r.ci95[0] for r in res]),
        text=[say("fig.eval.bar", accuracy=r.accuracy, ratio=q) for r, q in zip(res, ratios)], textposition="auto",
        customdata=[r.ci95 for r in res], hovertemplate=say("fig.eval.hover") + "<extra></extra>",
    ))
    fig.update_layout(title=say("fig.eval.title", task=report.task, n=report.n_test),
                      yaxis=dict(range=[0, 1], title=say("fig.accuracy")), height=320, margin=dict(t=50, b=10))
    return fig
