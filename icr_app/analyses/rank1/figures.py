"""Figures for the rank-1 analysis (icr_app/analyses/rank1/README.md), each drawn from a `Rank1Report`.

Errors and singular values span many orders of magnitude, so those axes are logarithmic: what matters is
the gap between the identity's rounding-level error and the context's effect, and between σ₁ and σ₂.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from icr_app.analyses.rank1 import cached
from icr_app.analyses.rank1.analysis import Rank1Report
from icr_app.figures.note import note_figure
from icr_app.figures.say import Say

_PROJ_COLOURS = {"gate": "#1f77b4", "up": "#ff7f0e", "fc": "#2ca02c"}
_FLOOR = 1e-12
"""Plotted instead of an exact 0 on log axes (a zero error or singular value has no logarithm)."""


def _layer_index(report: Rank1Report, layer: int | None) -> int:
    """Position of `layer` in the report's lists; the first checked layer when None."""
    if layer is None:
        return 0
    if layer not in report.layers:
        raise ValueError(f"layer {layer} was not checked; the report has layers {report.layers}")
    return report.layers.index(layer)


def _log_safe(values: list[float]) -> list[float]:
    return [max(v, _FLOOR) for v in values]


def singular_values_figure(report: Rank1Report, say: Say, layer: int | None = None) -> go.Figure:
    """Leading singular values of each ΔW at one layer: one bar, then a drop to rounding level."""
    i = _layer_index(report, layer)
    fig = go.Figure()
    for proj, rows in report.sigma.items():
        sig, ratio = rows[i], report.sigma_ratio[proj][i]
        reading = say("fig.r1.no_update") if ratio is None else f"σ₂/σ₁ = {ratio:.1e}"
        fig.add_trace(go.Bar(x=[f"σ{k + 1}" for k in range(len(sig))], y=_log_safe(sig),
                             name=f"ΔW_{proj} ({reading})", marker_color=_PROJ_COLOURS[proj]))
    fig.update_layout(
        title=say("fig.r1.sv_title", layer=report.layers[i], task=report.task, model=report.model),
        xaxis_title=say("fig.r1.sv"), yaxis_title=say("fig.r1.value"), yaxis_type="log", barmode="group",
    )
    return fig


def norm_vs_demos_figure(report: Rank1Report, say: Say, layer: int | None = None) -> go.Figure:
    """|ΔW| of each first matrix (Frobenius) and |Δh| at one layer as demonstrations are appended one by one."""
    i = _layer_index(report, layer)
    sw = report.sweep
    fig = go.Figure()
    series = [(f"|ΔW_{proj}|", rows, "y") for proj, rows in sw.delta_norm.items()] + [("|Δh|", sw.dh_norm, "y2")]
    for name, rows, axis in series:
        fig.add_trace(go.Scatter(x=sw.n_demos, y=[row[i] for row in rows], mode="lines+markers", name=name,
                                 yaxis=axis, line={"dash": "dot"} if axis == "y2" else {}))
    fig.update_layout(
        title=say("fig.r1.norm_title", layer=report.layers[i]),
        xaxis_title=say("fig.r1.demos"), yaxis_title=say("fig.r1.norm_w"),
        yaxis2={"title": say("fig.r1.norm_h"), "overlaying": "y", "side": "right"},
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def error_by_layer_figure(report: Rank1Report, say: Say, tolerance: float = 1e-4) -> go.Figure:
    """Per layer: the identity's max abs error next to the gap it closes (context-free vs with context)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=report.layers, y=_log_safe(report.max_abs_error), mode="lines+markers",
                             name=say("fig.r1.patched"), customdata=report.max_ulp_error,
                             hovertemplate=say("fig.r1.hover") + "<extra></extra>"))
    fig.add_trace(go.Scatter(x=report.layers, y=_log_safe(report.unpatched_error), mode="lines+markers",
                             name=say("fig.r1.unpatched")))
    fig.add_hline(y=tolerance, line_dash="dash", annotation_text=say("fig.r1.tolerance", tolerance=tolerance))
    fig.update_layout(
        title=say("fig.r1.error_title", task=report.task, model=report.model),
        xaxis_title=say("layer"), yaxis_title=say("fig.r1.error"), yaxis_type="log",
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def transfer_figure(report: Rank1Report, say: Say) -> go.Figure:
    """Per layer, on other queries: their own patch, the main query's patch, and no patch."""
    tr = report.transfer
    fig = go.Figure()
    for name, values in ((say("fig.r1.own"), tr.own_error), (say("fig.r1.main"), tr.transfer_error),
                         (say("fig.r1.none"), tr.unpatched_error)):
        fig.add_trace(go.Scatter(x=report.layers, y=_log_safe(values), mode="lines+markers", name=name))
    fig.update_layout(
        title=say("fig.r1.transfer_title", n=len(tr.queries)),
        xaxis_title=say("layer"), yaxis_title=say("fig.r1.transfer_error"), yaxis_type="log",
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def no_update_note(report: Rank1Report, say: Say) -> str:
    """Which checked layers have no update and why; empty when every layer has one."""
    if not report.no_update_layers:
        return ""
    return say("rank1.no_update", layers=", ".join(map(str, report.no_update_layers)))


def view_figures(views: dict[str, Any], say: Say, layer: int) -> tuple:
    """The four figures drawn from the rank-1 view (`cached`; a note each when there is none) at `layer` (the last
    checked one when it is past them), then `no_update_note`."""
    if "rank1" not in views:
        return *(note_figure(say("rank1.empty")) for _ in range(4)), ""
    report = cached.report(views["rank1"])
    layer = min(layer, max(report.layers))
    return (error_by_layer_figure(report, say), singular_values_figure(report, say, layer),
            norm_vs_demos_figure(report, say, layer), transfer_figure(report, say), no_update_note(report, say))
