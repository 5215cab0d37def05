"""ICV's tab: the visitor's built ICV (from "Build selected methods"): its strength sweep and its file."""

from __future__ import annotations

import gradio as gr

from icr_app.app.answers import Page
from icr_app.app.context import TASKS, AppContext, on
from icr_app.methods.icv.artefact import save_icv
from icr_app.methods.icv.method import ICV
from icr_app.methods.icv.view import sweep_figure

EXPLAIN = ("ICV compares, for each demonstration, the model's hidden state at the end of the query with the "
           "state once the answer is written: the shift that answering makes. The main direction of these shifts "
           "in each layer (their first principal component) is the in-context vector. On a zero-shot query it "
           "turns every hidden state towards that direction by a strength λ while keeping its length, so the "
           "model is nudged into answer mode for this task without any demonstration in the prompt. λ is picked "
           "on held-out training examples: too small does nothing, too large breaks the model.")
NOT_BUILT = "_not built for this task yet: choose ICV above and press “Build selected methods”_"


def build_tab(ctx: AppContext, page: Page) -> None:
    def show(built: dict, request: gr.Request):
        method = built.get("icv")
        if not isinstance(method, ICV) or method.lm is not ctx.lm:  # not built, or for a model since switched
            return None, NOT_BUILT, None
        state = method.state
        m = state.meta
        path = save_icv(state, ctx.session_dir(request) / f"icv-{m.task.replace('/', '_')}.safetensors")
        info = (f"ICV for **{m.task}**: {m.n_demos} demonstrations, λ = {m.strength:g} chosen on {m.n_val} "
                f"held-out examples; built in {method.build_s or m.build_s:.0f} s")
        return sweep_figure(state), info, str(path)

    with gr.Tab("ICV strength"):
        gr.Markdown(EXPLAIN)
        info = gr.Markdown(NOT_BUILT)
        figure = gr.Plot(label="validation accuracy per λ")
        download = gr.File(label="download this ICV (safetensors)", interactive=False)
    outs = [figure, info, download]
    on(page.built.change, show, page.built, outs, "icv_view", TASKS, queue=False)
    for event in page.task_changed:
        event.then(show, page.built, outs, queue=False)
