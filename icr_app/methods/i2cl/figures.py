"""What the tab shows of a calibrated I2CL: λ and β per layer for the attention and the MLP outputs (Plotly), and a
one-line summary."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from icr_app.methods.i2cl.method import MODULES, I2CLState


def coefficient_figure(state: I2CLState) -> go.Figure:
    """Two panels over layers: λ (how much context vector is added) and β (how much of the query's own output
    is kept), one line per module; hover shows the layer, the value and the context vector's norm."""
    coef, norms = state.coef, state.vectors.norm(dim=-1)
    layers = list(range(coef.shape[0]))
    fig = make_subplots(rows=1, cols=2, subplot_titles=("λ: context vector weight", "β: query output weight"))
    colours = {"attention": "#1f77b4", "mlp": "#d62728"}
    for col, (which, symbol) in enumerate((("context", "λ"), ("query", "β")), start=1):
        for m, module in enumerate(MODULES):
            fig.add_trace(go.Scatter(
                x=layers, y=coef[:, m, col - 1].tolist(), mode="lines+markers", name=f"{symbol} {module}",
                line={"color": colours[module], "dash": "solid" if col == 1 else "dot"},
                customdata=norms[:, m].tolist(),
                hovertemplate=f"layer %{{x}}<br>{symbol} {module} = %{{y:.3f}}<br>|v| = %{{customdata:.2f}}"
                              "<extra></extra>"), row=1, col=col)
        fig.update_xaxes(title_text="layer", row=1, col=col)
        fig.update_yaxes(title_text=f"{symbol} ({which})", row=1, col=col)
    m = state.meta
    fig.update_layout(title=f"I2CL coefficients for {m.task}: calibration loss {m.zero_shot_loss:.3f} (zero-shot) → "
                            f"{m.init_loss:.3f} (init) → {m.calibrated_loss:.3f} ({m.steps} steps)",
                      margin={"l": 60, "r": 20, "t": 80, "b": 40})
    return fig
