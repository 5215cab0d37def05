"""SITE's tab: its head map for the visitor's task (shipped for the built-in tasks, or built here with progress
and Cancel), and the task as a file to download or to load back."""

from __future__ import annotations

from icr_app.app.kit import AppContext, Page, TabBuild, built_method_tab
from icr_app.methods.site.method import SiteMethod, SiteState
from icr_app.methods.site.view import GUIDE, alpha_heatmap

EXPLAIN = ("SITE averages each attention head's output at the last token over many few-shot prompts (the task "
           "embedding), then learns a weight α per head: how much of the embedding replaces the head's zero-shot "
           "output. Heads near 1 carry the task. " + GUIDE)


def summary(site: SiteState) -> str:
    m = site.meta
    return (f"SITE for **{m.task}**: {m.n_prompts} prompts × {m.n_demos} demos, {m.objective} objective; "
            f"{m.steps} steps (best {m.best_step}); train loss {m.train_loss:.3f}, val loss {m.val_loss:.3f}; "
            f"built in {m.build_s:.0f} s")


def build_tab(ctx: AppContext, page: Page) -> None:
    built_method_tab(ctx, page, SiteMethod, "SITE head map", EXPLAIN, "α per layer and head", alpha_heatmap, summary,
                     build=TabBuild("steps", "training steps", 20, 400, "Build SITE"))
