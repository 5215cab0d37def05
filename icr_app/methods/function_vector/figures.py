"""What the app shows of a built function vector: the indirect-effect map with its top-k heads marked (Plotly), their
overlap with SITE's heads when SITE is built too, and a one-line summary."""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.figures.heads import head_map
from icr_app.figures.say import Say
from icr_app.methods.function_vector import FunctionVectorState, site_overlap


def aie_figure(fv: FunctionVectorState, say: Say) -> go.Figure:
    """The AIE per layer and head (`figures.heads.head_map`), the top-k heads outlined."""
    m = fv.meta
    aie = fv.aie
    fig = head_map(aie.tolist(), say, say("fig.fv.title", task=m.task, k=m.top_k, layer=m.layer), say("fig.fv.aie"),
                   zmin=min(0.0, float(aie.min())), zmax=max(float(aie.max()), 1e-6))
    layers, heads = zip(*fv.heads) if fv.heads else ((), ())
    fig.add_trace(go.Scatter(x=list(heads), y=list(layers), mode="markers", name=say("fig.fv.top", k=m.top_k),
                             marker={"symbol": "square-open", "size": 14, "color": "red", "line": {"width": 2}},
                             hovertemplate=say("fig.fv.hover") + "<extra></extra>"))
    fig.update_layout(showlegend=False)
    return fig


def overlap_text(fv: FunctionVectorState, built: dict, say: Say) -> str:
    """FV's top-k heads against SITE's top-k by α, when the visitor has built SITE on this task too."""
    site = built.get("site")
    if site is None:
        return say("fv.build_site")
    shared = site_overlap(fv.heads, site.state.alpha)
    listed = ", ".join(f"L{layer}H{head}" for layer, head in shared) or say("fv.none")
    return say("fv.overlap", n=len(shared), k=len(fv.heads), listed=listed)


def summary(fv: FunctionVectorState, say: Say) -> str:
    m = fv.meta
    heads = ", ".join(f"L{layer}H{head}" for layer, head in fv.heads)
    return say("fv.summary", task=m.task, n_prompts=m.n_prompts, n_corrupted=m.n_corrupted, n_demos=m.n_demos,
               k=m.top_k, heads=heads, layer=m.layer, n=fv.fv.numel(), s=m.build_s)
