"""The function vector's tab: the indirect-effect map of the visitor's built function vector (from "Build selected
methods") with its top-k heads marked, their overlap with SITE's heads when SITE is built too, and its file."""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.app.kit import AppContext, Page, built_method_tab
from icr_app.methods.function_vector import FunctionVectorMethod, FunctionVectorState, site_overlap
from icr_app.views.heads import head_map

EXPLAIN = ("A few attention heads carry the task from the demonstrations to the last token. To find them, the "
           "demonstrations' labels are shuffled, which breaks the task, and each head in turn gets back its "
           "average output from correct few-shot prompts: the rise in the probability of the right answer is that "
           "head's indirect effect (the map; the same axes and colours as SITE's α map). The outputs of the k "
           "strongest heads, mapped into the residual stream by their output projections and summed, are the "
           "function vector; added to a zero-shot query's last-token state a third of the way up the model, it "
           "makes the model do the task without any demonstration.")


def aie_figure(fv: FunctionVectorState) -> go.Figure:
    """The AIE per layer and head (`views.heads.head_map`), the top-k heads outlined."""
    m = fv.meta
    aie = fv.aie
    fig = head_map(aie.tolist(), f"Function vector for {m.task}: indirect effect per head, top {m.top_k} outlined "
                   f"(added after block {m.layer})", "AIE", zmin=min(0.0, float(aie.min())),
                   zmax=max(float(aie.max()), 1e-6))
    layers, heads = zip(*fv.heads) if fv.heads else ((), ())
    fig.add_trace(go.Scatter(x=list(heads), y=list(layers), mode="markers", name=f"top {m.top_k}",
                             marker={"symbol": "square-open", "size": 14, "color": "red", "line": {"width": 2}},
                             hovertemplate="layer %{y}, head %{x}: in the function vector<extra></extra>"))
    fig.update_layout(showlegend=False)
    return fig


def overlap_text(fv: FunctionVectorState, built: dict) -> str:
    """FV's top-k heads against SITE's top-k by α, when the visitor has built SITE on this task too."""
    site = built.get("site")
    if site is None:
        return "_build SITE too to compare its head selection with these heads_"
    shared = site_overlap(fv.heads, site.state.alpha)
    listed = ", ".join(f"L{layer}H{head}" for layer, head in shared) or "none"
    return (f"**{len(shared)} of the top {len(fv.heads)} heads** here are also among SITE's top {len(fv.heads)} "
            f"by α: {listed}")


def summary(fv: FunctionVectorState) -> str:
    m = fv.meta
    heads = ", ".join(f"L{layer}H{head}" for layer, head in fv.heads)
    return (f"Function vector for **{m.task}**: mean head outputs over {m.n_prompts} prompts, indirect effects over "
            f"{m.n_corrupted} shuffled-label prompts ({m.n_demos} demos each); top {m.top_k} heads {heads}; added "
            f"after block {m.layer}; {fv.fv.numel():,} stored numbers; built in {m.build_s:.0f} s")


def build_tab(ctx: AppContext, page: Page) -> None:
    built_method_tab(ctx, page, FunctionVectorMethod, "Function vector", EXPLAIN,
                     "average indirect effect per layer and head", aie_figure, summary, overlap_text)
