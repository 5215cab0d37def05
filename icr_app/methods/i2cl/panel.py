"""I2CL's tab: the visitor's built I2CL (from "Build selected methods"): its coefficients per layer and its file."""

from __future__ import annotations

from icr_app.app.kit import AppContext, Page, built_method_tab
from icr_app.methods.i2cl.method import I2CLMethod
from icr_app.methods.i2cl.view import coefficient_figure, summary

EXPLAIN = """\
I2CL runs each demonstration on its own and averages, per layer, what the attention and the MLP write into the
residual stream at its last token: two context vectors per layer that summarise the task. On a zero-shot query it
mixes them into every position, out' = β·out + λ·v, with 4 numbers per layer calibrated on the training examples
while the model stays frozen. A large λ is a layer where the demonstrations' summary helps; β below 1 is a layer
where the query's own output is damped."""


def build_tab(ctx: AppContext, page: Page) -> None:
    built_method_tab(ctx, page, I2CLMethod, "I2CL coefficients", EXPLAIN, "λ and β per layer", coefficient_figure,
                     summary)
