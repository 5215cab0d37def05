"""Figures for the applications of the anchors analysis: isolation, re-weighting, compression, confusion; and every
figure of the analysis drawn from its views (`cached`: its results as JSON, shipped or computed)."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from icr_app.analyses.anchors.compression import CompressionResult, Variant
from icr_app.analyses.anchors.confusion import ConfusionResult
from icr_app.analyses.anchors.flow_figures import FlowGraph, anchor_flow_figure, flow_curves_figure
from icr_app.analyses.anchors.isolation import IsolationRow
from icr_app.analyses.anchors.reweighting import ReweightResult
from icr_app.analyses.anchors.saliency import FlowResult
from icr_app.figures.note import note_figure
from icr_app.figures.say import Say


def _condition(row: IsolationRow, say: Say) -> str:
    """An isolation condition as the results name it ("label words" at "first 4"), in the reader's language; a name
    the strings do not know (a result from a later version) is shown as it is."""
    names = {"none": say("fig.iso.none"), "label words": say("fig.iso.label_words"),
             "random tokens": say("fig.iso.random")}
    name = names.get(row.condition, row.condition)
    side, _, k = row.layers.partition(" ")
    if side == "first":
        return say("fig.iso.first", name=name, k=k)
    if side == "last":
        return say("fig.iso.last", name=name, k=k)
    return name if row.layers == "-" else f"{name}, {row.layers}"


def isolation_figure(rows: list[IsolationRow], say: Say) -> go.Figure:
    """Label loyalty and accuracy per isolation condition (the unmodified model first)."""
    names = [_condition(r, say) for r in rows]
    fig = go.Figure([go.Bar(name=say("fig.label_loyalty"), x=names, y=[r.loyalty for r in rows]),
                     go.Bar(name=say("fig.accuracy"), x=names, y=[r.accuracy for r in rows])])
    fig.update_layout(title=say("fig.iso.title"), barmode="group", yaxis_range=[0, 1])
    return fig


def reweight_figure(results: list[ReweightResult], say: Say) -> go.Figure:
    """Held-out accuracy with the same demonstrations, before and after learning β, per task."""
    tasks = [r.task for r in results]
    fig = go.Figure([go.Bar(name=say("fig.rw.before"), x=tasks, y=[r.accuracy_before for r in results]),
                     go.Bar(name=say("fig.rw.after"), x=tasks, y=[r.accuracy_after for r in results])])
    fig.update_layout(title=say("fig.rw.title"), barmode="group", yaxis_range=[0, 1],
                      yaxis_title=say("fig.accuracy"))
    return fig


def compression_figure(result: CompressionResult, say: Say) -> go.Figure:
    """Accuracy and loyalty (left) and speed-up over full few-shot (right) of each way of using the demos."""
    known = {"full few-shot": say("fig.comp.full"), "full cache": say("fig.comp.full_cache"),
             "anchors cache": say("fig.comp.anchors_cache")}
    names = [known.get(name, name) for name in result.variants]
    v = list(result.variants.values())
    fig = make_subplots(rows=1, cols=2, subplot_titles=(say("fig.comp.quality"), say("fig.comp.speedup_title")))
    fig.add_trace(go.Bar(name=say("fig.accuracy"), x=names, y=[x.accuracy for x in v]), 1, 1)
    fig.add_trace(go.Bar(name=say("fig.loyalty"), x=names, y=[x.loyalty for x in v]), 1, 1)
    fig.add_trace(go.Bar(name=say("fig.comp.speedup"), x=names, y=[x.speedup for x in v],
                         text=[say("fig.comp.bar", speedup=x.speedup, tokens=x.cached_tokens) for x in v]), 1, 2)
    fig.update_layout(title=say("fig.comp.title", task=result.task, n=result.n, tokens=result.prefix_tokens),
                      barmode="group")
    fig.update_yaxes(range=[0, 1], row=1, col=1)
    return fig


def confusion_figure(result: ConfusionResult, say: Say) -> go.Figure:
    """Predicted confusability of the anchors beside the measured confusion matrix (rows gold)."""
    corr = say("fig.na") if result.correlation is None else f"{result.correlation:.2f}"
    fig = make_subplots(rows=1, cols=2, subplot_titles=(
        say("fig.conf.closeness", layer=result.layer), say("fig.conf.confusion", accuracy=result.accuracy)))
    fig.add_trace(go.Heatmap(z=result.predicted, x=result.labels, y=result.labels, colorscale="Blues",
                             showscale=False, texttemplate="%{z:.2f}"), 1, 1)
    fig.add_trace(go.Heatmap(z=result.confusion, x=result.labels, y=result.labels, colorscale="Reds",
                             showscale=False, texttemplate="%{z}"), 1, 2)
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title_text=say("fig.conf.predicted"), row=1, col=2)
    fig.update_layout(title=say("fig.conf.title", task=result.task, corr=corr))
    return fig


def experiment_figure(kind: str, data: dict[str, Any], say: Say) -> go.Figure:
    """One application's figure from its view: "re-weighting", "compression" or "confusion"."""
    if kind == "re-weighting":
        return reweight_figure([ReweightResult(**data)], say)
    if kind == "compression":
        return compression_figure(CompressionResult(**{**data, "variants": {
            k: Variant(**v) for k, v in data["variants"].items()}}), say)
    return confusion_figure(ConfusionResult(**data), say)


def arcs_figure(views: dict[str, Any], say: Say, layer: int, head: int | None, threshold: float) -> go.Figure:
    """The anchor flow of the views' first prompt (`flow_figures.anchor_flow_figure`); a note when there is none."""
    flow = views.get("flow")
    if flow is None:
        return note_figure(say("anchors.no_flow"))
    return anchor_flow_figure(FlowGraph(**flow["graph"]), say, layer, head, threshold)


def view_figures(views: dict[str, Any], say: Say, layer: int, head: int | None, threshold: float, kind: str
                 ) -> tuple[go.Figure, go.Figure, go.Figure, go.Figure]:
    """The flow curves, the anchor flow, isolation and application `kind`, each drawn from its view; a note where
    there is none."""
    flow = views.get("flow")
    curves = flow_curves_figure(FlowResult(**flow["result"]), say) if flow else note_figure(say("anchors.no_flow"))
    iso = isolation_figure([IsolationRow(**r) for r in views["isolation"]], say) if "isolation" in views else \
        note_figure(say("anchors.no_isolation"))
    exp = experiment_figure(kind, views[kind], say) if kind in views else \
        note_figure(say("anchors.not_run", kind=say(f"anchors.{kind}")))
    return curves, arcs_figure(views, say, layer, head, threshold), iso, exp
