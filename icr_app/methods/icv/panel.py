"""ICV's tab: the visitor's built ICV (from "Build selected methods"): its strength sweep and its file."""

from __future__ import annotations

from icr_app.app.kit import AppContext, Page, built_method_tab
from icr_app.methods.icv.method import ICVMethod
from icr_app.methods.icv.view import summary, sweep_figure

EXPLAIN = """\
ICV compares, for each demonstration, the model's hidden state at the end of the query with the state once the
answer is written: the shift that answering makes. The main direction of these shifts in each layer (their first
principal component) is the in-context vector. On a zero-shot query it turns every hidden state towards that
direction by a strength λ while keeping its length, so the model is nudged into answer mode for this task without
any demonstration in the prompt. λ is picked on held-out training examples: too small does nothing, too large breaks
the model."""


def build_tab(ctx: AppContext, page: Page) -> None:
    built_method_tab(ctx, page, ICVMethod, "ICV strength", EXPLAIN, "validation accuracy per λ", sweep_figure, summary)
