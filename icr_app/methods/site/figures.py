"""What the app shows of a SITE task: the learned head selection α (layers × heads, Plotly), and a one-line
summary."""

from __future__ import annotations

import plotly.graph_objects as go

from icr_app.figures.heads import head_map
from icr_app.figures.say import Say
from icr_app.methods.site.method import SiteState


def alpha_heatmap(site: SiteState, say: Say) -> go.Figure:
    """α = sigmoid(θ) per layer and head in [0, 1]; hover shows layer, head, α and the embedding's norm."""
    alpha = site.alpha
    near_binary = float(((alpha < 0.1) | (alpha > 0.9)).float().mean())
    title = say("fig.site.title", task=site.meta.task, mean=float(alpha.mean()), binary=near_binary)
    return head_map(alpha.tolist(), say, title, "α", extra=site.t.norm(dim=-1).tolist(), extra_name="|t|")


def summary(site: SiteState, say: Say) -> str:
    m = site.meta
    return say("site.summary", task=m.task, n_prompts=m.n_prompts, n_demos=m.n_demos, objective=m.objective,
               steps=m.steps, best=m.best_step, train=m.train_loss, val=m.val_loss, s=m.build_s)
