"""I2CL's tab: the visitor's built I2CL (from "Build selected methods"): its coefficients per layer and its file."""

from __future__ import annotations

import gradio as gr

from icr_app.app.answers import Page
from icr_app.app.context import TASKS, AppContext, on
from icr_app.methods.i2cl.artefact import save_i2cl
from icr_app.methods.i2cl.method import I2CL
from icr_app.methods.i2cl.view import coefficient_figure

EXPLAIN = ("I2CL runs each demonstration on its own and averages, per layer, what the attention and the MLP "
           "write into the residual stream at its last token: two context vectors per layer that summarise the "
           "task. On a zero-shot query it mixes them into every position, out' = β·out + λ·v, with 4 numbers per "
           "layer calibrated on the training examples while the model stays frozen. A large λ is a layer where "
           "the demonstrations' summary helps; β below 1 is a layer where the query's own output is damped.")
NOT_BUILT = "_not built for this task yet: choose I2CL above and press “Build selected methods”_"


def build_tab(ctx: AppContext, page: Page) -> None:
    def show(built: dict, request: gr.Request):
        method = built.get("i2cl")
        if not isinstance(method, I2CL) or method.lm is not ctx.lm:  # not built, or for a model since switched
            return None, NOT_BUILT, None
        state = method.state
        m = state.meta
        path = save_i2cl(state, ctx.session_dir(request) / f"i2cl-{m.task.replace('/', '_')}.safetensors")
        info = (f"I2CL for **{m.task}**: {m.n_demos} demonstrations, calibrated on {m.n_calibration} examples "
                f"for {m.steps} steps ({m.loss} loss); built in {method.build_s or m.build_s:.0f} s")
        return coefficient_figure(state), info, str(path)

    with gr.Tab("I2CL coefficients"):
        gr.Markdown(EXPLAIN)
        info = gr.Markdown(NOT_BUILT)
        figure = gr.Plot(label="λ and β per layer")
        download = gr.File(label="download this I2CL (safetensors)", interactive=False)
    outs = [figure, info, download]
    on(page.built.change, show, page.built, outs, "i2cl_view", TASKS, queue=False)
    for event in page.task_changed:
        event.then(show, page.built, outs, queue=False)
