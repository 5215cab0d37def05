"""Plotly figures of a trained LoRA adapter: its training curve, and what it trains beside SITE."""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.methods.lora.method import LoraState


def training_curve(adapter: LoraState) -> go.Figure:
    """Answer-token loss per step (training batches, and the validation part), validation accuracy on the right."""
    m, c = adapter.meta, adapter.meta.curve
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(range(1, len(c.train_loss) + 1)), y=c.train_loss, mode="lines",
                             name="training loss (batch)", hovertemplate="step %{x}<br>loss %{y:.3f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=c.val_step, y=c.val_loss, mode="lines+markers", name="validation loss",
                             hovertemplate="step %{x}<br>validation loss %{y:.3f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=c.val_step, y=c.val_accuracy, mode="lines+markers", name="validation accuracy",
                             yaxis="y2", line={"dash": "dot"},
                             hovertemplate="step %{x}<br>validation accuracy %{y:.0%}<extra></extra>"))
    fig.add_vline(x=c.best_step, line_dash="dash", line_color="grey",
                  annotation_text=f"kept: step {c.best_step}", annotation_position="top left")
    fig.update_layout(
        title=f"LoRA on {m.task}: {len(c.train_loss)} steps on {m.n_fit} examples, validated on {m.n_val}",
        xaxis_title="training step", yaxis_title="answer-token cross-entropy",
        yaxis2={"title": "validation accuracy", "overlaying": "y", "side": "right", "range": [0, 1],
                "tickformat": ".0%"},
        legend={"orientation": "h", "y": -0.2}, margin={"l": 60, "r": 60, "t": 60, "b": 40},
    )
    return fig


def parameter_bars(lora: int, site: int | None) -> go.Figure:
    """Trained parameters of LoRA and, when the visitor built it, SITE (log scale: they differ by ~1000×)."""
    names, values = ["LoRA (fine-tuning)"], [lora]
    if site is not None:
        names.append("SITE (implicit ICL)")
        values.append(site)
    fig = go.Figure(go.Bar(x=names, y=values, text=[f"{v:,}" for v in values], textposition="outside",
                           hovertemplate="%{x}<br>%{y:,} trained parameters<extra></extra>"))
    title = "trained parameters" + ("" if site is not None else " (build SITE to compare)")
    fig.update_layout(title=title, yaxis_title="trained parameters (log scale)", yaxis_type="log",
                      xaxis_title="method", margin={"l": 60, "r": 20, "t": 60, "b": 40})
    return fig
