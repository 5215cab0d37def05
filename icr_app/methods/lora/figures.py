"""What the app shows of a trained LoRA adapter: its training curve, what it trains beside SITE (Plotly), and a
one-line summary."""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.figures.say import Say
from icr_app.methods.lora.method import LoraState


def training_curve(adapter: LoraState, say: Say) -> go.Figure:
    """Answer-token loss per step (training batches, and the validation part), validation accuracy on the right."""
    m, c = adapter.meta, adapter.meta.curve
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(range(1, len(c.train_loss) + 1)), y=c.train_loss, mode="lines",
                             name=say("fig.lora.train_loss"),
                             hovertemplate=say("fig.lora.train_hover") + "<extra></extra>"))
    fig.add_trace(go.Scatter(x=c.val_step, y=c.val_loss, mode="lines+markers", name=say("fig.lora.val_loss"),
                             hovertemplate=say("fig.lora.val_loss_hover") + "<extra></extra>"))
    fig.add_trace(go.Scatter(x=c.val_step, y=c.val_accuracy, mode="lines+markers", name=say("fig.val_accuracy"),
                             yaxis="y2", line={"dash": "dot"},
                             hovertemplate=say("fig.lora.val_accuracy_hover") + "<extra></extra>"))
    fig.add_vline(x=c.best_step, line_dash="dash", line_color="grey",
                  annotation_text=say("fig.lora.kept", step=c.best_step), annotation_position="top left")
    fig.update_layout(
        title=say("fig.lora.title", task=m.task, steps=len(c.train_loss), n_fit=m.n_fit, n_val=m.n_val),
        xaxis_title=say("fig.lora.step"), yaxis_title=say("fig.lora.loss"),
        yaxis2={"title": say("fig.val_accuracy"), "overlaying": "y", "side": "right", "range": [0, 1],
                "tickformat": ".0%"},
        legend={"orientation": "h", "y": -0.2}, margin={"l": 60, "r": 60, "t": 60, "b": 40},
    )
    return fig


def parameter_bars(lora: int, site: int | None, say: Say) -> go.Figure:
    """Trained parameters of LoRA and, when the visitor built it, SITE (log scale: they differ by ~1000×)."""
    names, values = [say("fig.lora.lora")], [lora]
    if site is not None:
        names.append(say("fig.lora.site"))
        values.append(site)
    fig = go.Figure(go.Bar(x=names, y=values, text=[f"{v:,}" for v in values], textposition="outside",
                           hovertemplate=say("fig.lora.params_hover") + "<extra></extra>"))
    title = say("fig.lora.params") if site is not None else say("fig.lora.params_alone")
    fig.update_layout(title=title, yaxis_title=say("fig.lora.params_log"), yaxis_type="log",
                      xaxis_title=say("fig.method"), margin={"l": 60, "r": 20, "t": 60, "b": 40})
    return fig


def beside_site(adapter: LoraState, built: dict, say: Say) -> go.Figure:
    """LoRA's trained parameters beside SITE's, when the visitor built SITE for this model too."""
    site = built.get("site")
    return parameter_bars(adapter.n_parameters, None if site is None else site.trainable_parameters, say)


def summary(adapter: LoraState, say: Say) -> str:
    m, c, cfg = adapter.meta, adapter.meta.curve, adapter.peft
    if not c.val_step:  # read from a PEFT folder made elsewhere (`peft_folder`): no training was seen
        return say("lora.summary_peft", task=m.task, n=adapter.n_parameters, r=cfg["r"],
                   modules=", ".join(cfg["target_modules"]))
    best = c.val_step.index(c.best_step)
    return say("lora.summary", task=m.task, n=adapter.n_parameters, r=cfg["r"],
               modules=", ".join(cfg["target_modules"]), steps=len(c.train_loss), best=c.best_step,
               loss=c.val_loss[best], acc=c.val_accuracy[best], s=m.build_s)
