"""What the tab shows of a calibrated I2CL: λ and β per layer for the attention and the MLP outputs (Plotly), and a
one-line summary."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from icr_app.figures.say import Say
from icr_app.methods.i2cl.method import MODULES, I2CLState


def coefficient_figure(state: I2CLState, say: Say) -> go.Figure:
    """Two panels over layers: λ (how much context vector is added) and β (how much of the query's own output
    is kept), one line per module; hover shows the layer, the value and the context vector's norm."""
    coef, norms = state.coef, state.vectors.norm(dim=-1)
    layers = list(range(coef.shape[0]))
    fig = make_subplots(rows=1, cols=2, subplot_titles=(say("fig.i2cl.lambda"), say("fig.i2cl.beta")))
    colours = {"attention": "#1f77b4", "mlp": "#d62728"}
    names = {"attention": say("fig.i2cl.attention"), "mlp": say("fig.i2cl.mlp")}
    for col, (axis, symbol) in enumerate(((say("fig.i2cl.lambda_axis"), "λ"), (say("fig.i2cl.beta_axis"), "β")),
                                         start=1):
        for m, module in enumerate(MODULES):
            name = f"{symbol} {names[module]}"
            fig.add_trace(go.Scatter(
                x=layers, y=coef[:, m, col - 1].tolist(), mode="lines+markers", name=name,
                line={"color": colours[module], "dash": "solid" if col == 1 else "dot"},
                customdata=norms[:, m].tolist(),
                hovertemplate=say("fig.i2cl.hover", name=name) + "<extra></extra>"), row=1, col=col)
        fig.update_xaxes(title_text=say("layer"), row=1, col=col)
        fig.update_yaxes(title_text=axis, row=1, col=col)
    meta = state.meta
    fig.update_layout(title=say("fig.i2cl.title", task=meta.task, zero_shot=meta.zero_shot_loss, init=meta.init_loss,
                                calibrated=meta.calibrated_loss, steps=meta.steps),
                      margin={"l": 60, "r": 20, "t": 80, "b": 40})
    return fig


def summary(state: I2CLState, say: Say) -> str:
    m = state.meta
    return say("i2cl.summary", task=m.task, n_demos=m.n_demos, n_cal=m.n_calibration, steps=m.steps, loss=m.loss,
               s=m.build_s)
