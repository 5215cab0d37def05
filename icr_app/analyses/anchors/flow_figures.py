"""Figures for the saliency information flow: the three curves over layers, and one prompt's anchor flow.

The curves show where each layer's decision-relevant flow goes (text → label words, label words → target,
everything else). The anchor-flow figure lays the prompt out as text, one demonstration per line and the query
last, and draws one layer's strongest links over it (all heads summed, or one head), so a reader can see the
label words gather their demonstration's text and the answer position then read the label words.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import plotly.graph_objects as go
import torch

from icr_app.analyses.anchors.prompt import AnchorPrompt
from icr_app.analyses.anchors.saliency import FLOWS, FlowResult, flow_facts, position_sets
from icr_app.figures.say import Say

_COLOURS = {"S_wp": "#1f77b4", "S_pq": "#d62728", "S_ww": "#7f7f7f"}
_ROLE_COLOURS = {"target": "#d62728", "label word": "#ff7f0e", "format": "#999999", "text": "#1f3b73"}


def _facts(result: FlowResult, say: Say) -> str:
    """`saliency.describe` in the reader's language."""
    facts = flow_facts(result)
    since = "" if facts["since"] is None else say("fig.flow.since", since=facts["since"])
    return say("fig.flow.facts", **facts) + since


def flow_curves_figure(result: FlowResult, say: Say) -> go.Figure:
    """S_wp, S_pq, S_ww per layer, rescaled to sum to 1 at each layer, averaged over the prompts."""
    norm = result.normalised()
    names = {"S_wp": say("fig.flow.wp"), "S_pq": say("fig.flow.pq"), "S_ww": say("fig.flow.ww")}
    fig = go.Figure()
    for k in FLOWS:
        fig.add_trace(go.Scatter(x=list(range(len(norm[k]))), y=norm[k], mode="lines+markers", name=names[k],
                                 line={"color": _COLOURS[k]},
                                 hovertemplate=say("fig.flow.hover", flow=k) + "<extra></extra>"))
    fig.update_layout(
        title=say("fig.flow.title", task=result.task, model=result.model, n=result.n_prompts,
                  tokens=result.mean_tokens) + f"<br><sup>{_facts(result, say)}</sup>",
        xaxis_title=say("layer"), yaxis_title=say("fig.flow.share"), yaxis_range=[0, 1],
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def _display(tok: str) -> str:
    return tok.replace("\n", "⏎").strip() or "␣"


@dataclass
class FlowGraph:
    """One prompt's anchor flow as a graph to draw: its tokens laid out as text, and per layer (and per head)
    its strongest text → label-word links and every label-word → target link. JSON-able, so the app can ship it
    precomputed for the built-in tasks."""

    tokens: list[str]
    roles: list[str]
    row: list[int]  # the demonstration each token belongs to (the query's row last)
    col: list[float]  # where each token starts in its row, in characters
    n_layers: int
    n_heads: int
    links: list[list[float]]  # [layer, head or -1 for all heads summed, src, dst, I]

    def to_json(self) -> dict:
        return asdict(self)


def _layout(prompt: AnchorPrompt) -> tuple[list[str], list[int], list[float]]:
    """Roles, rows and character columns: a row per demonstration (the separator after its label stays on its
    line) and the query last; a token starts where the text before it ends, so subwords sit together."""
    labels, fmt = set(prompt.label_positions), set(prompt.format_positions)
    roles = ["target" if i == prompt.target else "label word" if i in labels else "format" if i in fmt else "text"
             for i in range(len(prompt))]
    ends = sorted(max(toks) for toks in prompt.label_tokens)
    rows: list[int] = []
    cols: list[float] = []
    x, trailing = 0.0, False
    for i, tok in enumerate(prompt.tokens):
        row = sum(end < i for end in ends)
        trailing = bool(row) and not tok.strip() and (ends[row - 1] == i - 1 or trailing)
        if trailing:  # whitespace right after a label ends that demonstration's line
            row -= 1
        if rows and row != rows[-1]:
            x = 0.0
        rows.append(row)
        cols.append(x)
        x += max(1, len(tok.replace("\n", "⏎")))
    return roles, rows, cols


def flow_graph(prompt: AnchorPrompt, head_sal: torch.Tensor, top: int = 40, top_head: int = 8) -> FlowGraph:
    """From a prompt's per-head saliency (L, H, T, T): the links worth drawing, per layer and per head."""
    sets = position_sets(prompt)
    wp, pq = sets["S_wp"], sets["S_pq"]
    links: list[list[float]] = []

    def keep(layer: int, head: int, sal: torch.Tensor, k: int) -> None:
        text = torch.where(wp, sal, torch.zeros_like(sal)).flatten()
        for idx in text.topk(min(k, int(wp.sum()))).indices.tolist():
            links.append([layer, head, idx % sal.shape[1], idx // sal.shape[1], float(sal.flatten()[idx])])
        for dst, src in pq.nonzero().tolist():
            links.append([layer, head, src, dst, float(sal[dst, src])])

    sal = head_sal.cpu()
    for layer in range(sal.shape[0]):
        keep(layer, -1, sal[layer].sum(0).abs(), top)
        for head in range(sal.shape[1]):
            keep(layer, head, sal[layer, head].abs(), top_head)
    roles, rows, cols = _layout(prompt)
    return FlowGraph(list(prompt.tokens), roles, rows, cols, sal.shape[0], sal.shape[1], links)


def _curve(x0: float, y0: float, x1: float, y1: float, n: int = 20) -> tuple[list[float], list[float]]:
    """A quadratic curve from (x0, y0) to (x1, y1), bulging upwards so links on one line stay visible."""
    t = torch.linspace(0, 1, n)
    lift = 0.35 + 0.02 * abs(x1 - x0) ** 0.5
    cx, cy = (x0 + x1) / 2, max(y0, y1) + lift
    xs = (1 - t) ** 2 * x0 + 2 * (1 - t) * t * cx + t ** 2 * x1
    ys = (1 - t) ** 2 * y0 + 2 * (1 - t) * t * cy + t ** 2 * y1
    return xs.tolist(), ys.tolist()


def anchor_flow_figure(graph: FlowGraph, say: Say, layer: int, head: int | None = None, threshold: float = 0.1
                       ) -> go.Figure:
    """The prompt as text (a line per demonstration) with layer `layer`'s links drawn over it: all heads summed
    when `head` is None, else that head; links below `threshold` × the strongest are left out."""
    want = -1 if head is None else head
    drawn = [lk for lk in graph.links if int(lk[0]) == layer and int(lk[1]) == want]
    strongest = max((lk[4] for lk in drawn), default=0.0) or 1.0
    n_rows = max(graph.row) + 1
    pos = [(c + len(t.replace("\n", "⏎")) / 2, float(n_rows - 1 - r)) for t, r, c in
           zip(graph.tokens, graph.row, graph.col)]
    fig = go.Figure()
    for _, _, src, dst, value in sorted(drawn, key=lambda lk: lk[4]):
        w = value / strongest
        if w < threshold:
            continue
        src, dst = int(src), int(dst)
        kind = "S_pq" if graph.roles[dst] == "target" else "S_wp"
        xs, ys = _curve(*pos[src], *pos[dst])
        fig.add_trace(go.Scatter(
            x=xs, y=ys, mode="lines", showlegend=False, hoverinfo="text", opacity=0.3 + 0.7 * w,
            line={"width": 1 + 6 * w, "color": _COLOURS[kind]},
            text=say("fig.flow.link", src=repr(_display(graph.tokens[src])), dst=repr(_display(graph.tokens[dst])),
                     value=value, share=w),
        ))
    roles = {"target": say("fig.role.target"), "label word": say("fig.role.label_word"),
             "format": say("fig.role.format"), "text": say("fig.role.text")}
    for role, colour in _ROLE_COLOURS.items():
        idx = [i for i, r in enumerate(graph.roles) if r == role]
        fig.add_trace(go.Scatter(
            x=[pos[i][0] for i in idx], y=[pos[i][1] for i in idx], mode="text", name=roles[role],
            text=[_display(graph.tokens[i]) for i in idx],
            textfont={"color": colour, "size": 12, "family": "monospace"},
            hovertext=[say("fig.flow.token", i=i, token=repr(_display(graph.tokens[i])), role=roles[role])
                       for i in idx],
            hoverinfo="text",
        ))
    which = say("anchors.all_heads") if head is None else say("fig.head_n", head=head)
    guide = say("fig.flow.guide")
    fig.update_layout(
        title=say("fig.flow.arcs_title", layer=layer, which=which) + f"<br><sup>{guide}</sup>",
        xaxis={"visible": False, "range": [-1, max(c + len(t) for t, c in zip(graph.tokens, graph.col)) + 1]},
        yaxis={"visible": False, "range": [-0.6, n_rows + 0.2]},
        legend={"orientation": "h", "y": -0.05}, height=140 + 34 * n_rows, margin={"l": 10, "r": 10, "t": 80},
    )
    return fig
