"""Figures for the applications of the anchors analysis: isolation, re-weighting, compression, confusion."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from icr_app.analyses.anchors.compression import CompressionResult
from icr_app.analyses.anchors.confusion import ConfusionResult
from icr_app.analyses.anchors.isolation import IsolationRow
from icr_app.analyses.anchors.reweighting import ReweightResult


def isolation_figure(rows: list[IsolationRow]) -> go.Figure:
    """Label loyalty and accuracy per isolation condition (the unmodified model first)."""
    names = [r.condition if r.layers == "-" else f"{r.condition}, {r.layers}" for r in rows]
    fig = go.Figure([go.Bar(name="label loyalty", x=names, y=[r.loyalty for r in rows]),
                     go.Bar(name="accuracy", x=names, y=[r.accuracy for r in rows])])
    fig.update_layout(title="Attention isolation: label words vs random tokens cut off from earlier text",
                      barmode="group", yaxis_range=[0, 1])
    return fig


def reweight_figure(results: list[ReweightResult]) -> go.Figure:
    """Held-out accuracy with the same demonstrations, before and after learning β, per task."""
    tasks = [r.task for r in results]
    fig = go.Figure([go.Bar(name="ICL (1 demo per class)", x=tasks, y=[r.accuracy_before for r in results]),
                     go.Bar(name="+ anchor re-weighting", x=tasks, y=[r.accuracy_after for r in results])])
    fig.update_layout(title="Anchor re-weighting", barmode="group", yaxis_range=[0, 1], yaxis_title="accuracy")
    return fig


def compression_figure(result: CompressionResult) -> go.Figure:
    """Accuracy and loyalty (left) and speed-up over full few-shot (right) of each way of using the demos."""
    names = list(result.variants)
    v = list(result.variants.values())
    fig = make_subplots(rows=1, cols=2, subplot_titles=("quality", "speed-up vs full few-shot"))
    fig.add_trace(go.Bar(name="accuracy", x=names, y=[x.accuracy for x in v]), 1, 1)
    fig.add_trace(go.Bar(name="loyalty", x=names, y=[x.loyalty for x in v]), 1, 1)
    fig.add_trace(go.Bar(name="speed-up", x=names, y=[x.speedup for x in v],
                         text=[f"{x.speedup:.2f}x, {x.cached_tokens} tok" for x in v]), 1, 2)
    fig.update_layout(title=f"Hidden-anchor compression, {result.task} (n={result.n}, "
                            f"{result.prefix_tokens} demonstration tokens)", barmode="group")
    fig.update_yaxes(range=[0, 1], row=1, col=1)
    return fig


def confusion_figure(result: ConfusionResult) -> go.Figure:
    """Predicted confusability of the anchors beside the measured confusion matrix (rows gold)."""
    corr = "n/a" if result.correlation is None else f"{result.correlation:.2f}"
    fig = make_subplots(rows=1, cols=2, subplot_titles=(
        f"anchor closeness, layer {result.layer}", f"confusion (accuracy {result.accuracy:.2f})"))
    fig.add_trace(go.Heatmap(z=result.predicted, x=result.labels, y=result.labels, colorscale="Blues",
                             showscale=False, texttemplate="%{z:.2f}"), 1, 1)
    fig.add_trace(go.Heatmap(z=result.confusion, x=result.labels, y=result.labels, colorscale="Reds",
                             showscale=False, texttemplate="%{z}"), 1, 2)
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title_text="predicted", row=1, col=2)
    fig.update_layout(title=f"Anchor confusion diagnosis, {result.task} (pair correlation {corr})")
    return fig
