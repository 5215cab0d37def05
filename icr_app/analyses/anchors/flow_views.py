"""Figures for the saliency information flow: the three curves over layers, and one prompt's anchor flow.

The curves show where each layer's decision-relevant flow goes (text → label words, label words →
target, everything else); the anchor-flow view draws, for one layer, the strongest of those links
over the prompt's tokens, so the reader can see the label words gather and then hand on.
"""

from __future__ import annotations

import plotly.graph_objects as go
import torch

from icr_app.analyses.anchors.prompt import AnchorPrompt
from icr_app.analyses.anchors.saliency import FLOWS, FlowResult, describe, position_sets

_NAMES = {"S_wp": "text → label words (S_wp)", "S_pq": "label words → target (S_pq)", "S_ww": "other pairs (S_ww)"}
_COLOURS = {"S_wp": "#1f77b4", "S_pq": "#d62728", "S_ww": "#7f7f7f"}


def flow_curves_figure(result: FlowResult) -> go.Figure:
    """S_wp, S_pq, S_ww per layer, rescaled to sum to 1 at each layer, averaged over the prompts."""
    norm = result.normalised()
    fig = go.Figure()
    for k in FLOWS:
        fig.add_trace(go.Scatter(x=list(range(len(norm[k]))), y=norm[k], mode="lines+markers", name=_NAMES[k],
                                 line={"color": _COLOURS[k]}))
    fig.update_layout(
        title=f"Information flow, {result.task} on {result.model} ({result.n_prompts} prompts, "
              f"~{result.mean_tokens:.0f} tokens)<br><sup>{describe(result)}</sup>",
        xaxis_title="layer", yaxis_title="share of the layer's flow", yaxis_range=[0, 1],
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def _arc(x0: int, x1: int, up: bool, n: int = 24) -> tuple[list[float], list[float]]:
    t = torch.linspace(0, torch.pi, n)
    mid, radius = (x0 + x1) / 2, abs(x1 - x0) / 2
    ys = radius * torch.sin(t) * (1 if up else -1)
    return (mid - radius * torch.cos(t)).tolist(), ys.tolist()


def _label(tok: str) -> str:
    return tok.replace("\n", "⏎").strip() or "␣"


def anchor_flow_figure(prompt: AnchorPrompt, flow: torch.Tensor, layer: int, top_k: int = 15) -> go.Figure:
    """Arc diagram of layer `layer`: the top_k text → label-word links above, label words → target below.

    `flow` is the (L, T, T) saliency of this prompt (`saliency.prompt_saliency`); arc width and opacity
    follow `I_l(i, j)`, scaled to the strongest link drawn.
    """
    sal = flow[layer].cpu()
    sets = position_sets(prompt)
    wp = torch.where(sets["S_wp"], sal, torch.zeros_like(sal))
    top = wp.flatten().topk(min(top_k, int(sets["S_wp"].sum()))).indices
    links = [(int(i) % sal.shape[1], int(i) // sal.shape[1], True) for i in top]
    links += [(p, prompt.target, False) for p in prompt.label_positions]
    strongest = max((float(sal[dst, src]) for src, dst, _ in links), default=0.0) or 1.0
    fig = go.Figure()
    for src, dst, up in links:
        w = float(sal[dst, src]) / strongest
        xs, ys = _arc(src, dst, up)
        fig.add_trace(go.Scatter(
            x=xs, y=ys, mode="lines", showlegend=False, hoverinfo="text",
            line={"width": 1 + 7 * w, "color": _COLOURS["S_wp" if up else "S_pq"]}, opacity=0.25 + 0.75 * w,
            text=f"{_label(prompt.tokens[src])!r} → {_label(prompt.tokens[dst])!r}: I={float(sal[dst, src]):.3g}",
        ))
    labels, fmt = set(prompt.label_positions), set(prompt.format_positions)
    roles = ["target" if i == prompt.target else "label word" if i in labels else "format" if i in fmt else "text"
             for i in range(len(prompt))]
    colours = {"target": "#d62728", "label word": "#ff7f0e", "format": "#bbbbbb", "text": "#1f77b4"}
    for role, colour in colours.items():
        idx = [i for i, r in enumerate(roles) if r == role]
        fig.add_trace(go.Scatter(x=idx, y=[0] * len(idx), mode="markers", name=role, marker={"color": colour},
                                 text=[_label(prompt.tokens[i]) for i in idx], hoverinfo="text+x"))
    fig.update_layout(
        title=f"Anchor flow at layer {layer}: text → label words (above), label words → target (below)",
        xaxis={"tickmode": "array", "tickvals": list(range(len(prompt))), "tickangle": -90,
               "ticktext": [_label(t) for t in prompt.tokens], "tickfont": {"size": 8}},
        yaxis={"visible": False}, legend={"orientation": "h", "y": 1.08}, height=520,
    )
    return fig
