"""SITE's tab: its head map for the visitor's task (shipped for the built-in tasks, or built here with progress
and Cancel), and the task as a file to download or to load back."""

from __future__ import annotations

from icr_app.app.kit import AppContext, Page, TabBuild, built_method_tab, say, t
from icr_app.methods.site.figures import alpha_heatmap
from icr_app.methods.site.method import SiteMethod, SiteState


def summary(site: SiteState) -> str:
    m = site.meta
    return say("site.summary", task=m.task, n_prompts=m.n_prompts, n_demos=m.n_demos, objective=m.objective,
               steps=m.steps, best=m.best_step, train=m.train_loss, val=m.val_loss, s=m.build_s)


def build_tab(ctx: AppContext, page: Page) -> None:
    built_method_tab(ctx, page, SiteMethod, t("site.tab"), t("site.explain"), t("site.map"), alpha_heatmap, summary,
                     build=TabBuild("steps", t("site.steps"), 20, 400, t("site.build"), t("site.load"),
                                    "site.building"))
