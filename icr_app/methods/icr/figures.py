"""ICR's view (`MethodView`): one query's routing, α(x) per routed layer and PID direction and γ(x) per layer and
head (`query_maps`), and a built router summed up in words (`summary`).

γ(x) is drawn with the shared layers × heads map (`figures.heads`), every layer on the axis and the unrouted ones
blank, so it lines up with SITE's α map and the other methods' head maps.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from icr_app.figures.heads import head_map
from icr_app.figures.say import Say
from icr_app.methods.icr.method import ICRMethod, ICRState
from icr_app.methods.icr.router import ICRRouter


def routing_figures(router: ICRRouter, say: Say, query: str) -> tuple[go.Figure, go.Figure]:
    """α(x) and γ(x) for one query, from one pass of the encoder and the router.

    An ensemble shows its members' mean α and mean γ (its bias averages each member's γ·α).
    """
    alpha, gamma = router.route([query])
    of = ""
    if alpha.dim() == 4:
        alpha, gamma, of = alpha.mean(1), gamma.mean(1), say("fig.icr.mean_of", n=alpha.shape[1])
    bound = float(router.net.alpha_scale)
    alpha_fig = go.Figure(go.Heatmap(
        z=alpha[0].tolist(), x=list(range(alpha.shape[-1])), y=router.layers, zmin=-bound, zmax=bound,
        colorscale="RdBu", colorbar={"title": "α"},
        hovertemplate=say("fig.icr.alpha_hover") + "<extra></extra>"))
    alpha_fig.update_layout(title=say("fig.icr.title", map="α(x)", of=of, query=query[:60]),
                            xaxis_title=say("fig.icr.direction"), yaxis_title=say("layer"),
                            yaxis={"autorange": "reversed"}, margin={"l": 60, "r": 20, "t": 60, "b": 40})
    rows = {layer: row for layer, row in zip(router.layers, gamma[0].tolist())}
    n_heads = gamma.shape[-1]
    full = [rows.get(layer, [math.nan] * n_heads) for layer in range(router.lm.n_layers)]
    return alpha_fig, head_map(full, say, say("fig.icr.title", map="γ(x)", of=of, query=query[:60]), "γ")


def query_maps(method: ICRMethod, query: str, say: Say) -> tuple[go.Figure, go.Figure]:
    """The view's figures of the visitor's query: α(x) and γ(x) of the method's router."""
    return routing_figures(method.router, say, query)


def summary(state: ICRState, say: Say) -> str:
    """What the built method's router is: its members, routed layers, directions and what it was trained on."""
    router = state.meta.router
    layers = router.layers
    return say("icr.summary", task=state.meta.task, members=state.alpha_w1.shape[0], first=min(layers),
               last=max(layers), rank=state.u_q.shape[-1], domains=len(set(router.pids.get("domains", []))),
               encoder=router.encoder)
