"""The anchor-flow tab: saliency flow over layers, one prompt's strongest links, isolation and the applications."""

from __future__ import annotations

import gradio as gr

from icr_app.analyses.anchors.compression import compression_experiment, fixed_demo_prompts
from icr_app.analyses.anchors.confusion import confusion_experiment
from icr_app.analyses.anchors.flow_views import anchor_flow_figure, flow_curves_figure
from icr_app.analyses.anchors.isolation import isolation_experiment
from icr_app.analyses.anchors.reweighting import reweight_experiment
from icr_app.analyses.anchors.saliency import information_flow, task_prompts
from icr_app.analyses.anchors.views import compression_figure, confusion_figure, isolation_figure, reweight_figure
from icr_app.app.answers import Page
from icr_app.app.context import JOBS, AppContext, on
from icr_app.core.prompts import Template
from icr_app.core.tasks import Task

EXPLAIN = ("Saliency A ⊙ ∂L/∂A tells how much each attention edge matters for the answer. Label words act as "
           "anchors: in shallow layers text flows into the label words (S_wp); in deep layers the answer reads "
           "them (S_pq). The curves average several prompts; the arcs show one prompt's strongest edges.")


def _classification(task: Task) -> None:
    if task.kind != "classification":
        raise gr.Error("the anchor views need a classification task (label words are the anchors)")


def build_tab(ctx: AppContext, page: Page) -> None:
    lm = ctx.lm

    def flow(task: Task, n_prompts: int, shots: int, seed: int, request: gr.Request,
             progress: gr.Progress = gr.Progress()):  # noqa: B008
        _classification(task)
        prompts = task_prompts(lm, task, int(n_prompts), int(shots), int(seed))
        kept: list[tuple] = []
        result = information_flow(lm, task, prompts, ctx.progress(progress, request, "flow", "saliency"),
                                  keep=lambda p, sal: kept.append((p, sal)) if not kept else None)
        one, sal = kept[0]
        layer = lm.n_layers // 2
        return (flow_curves_figure(result), anchor_flow_figure(one, sal, layer), (one, sal),
                gr.update(maximum=lm.n_layers - 1, value=layer))

    def flow_layer(state, layer: int):
        if state is None:
            raise gr.Error("compute the flow first")
        return anchor_flow_figure(state[0], state[1], int(layer))

    def isolate(task: Task, k: int, shots: int, seed: int, request: gr.Request,
                progress: gr.Progress = gr.Progress()):  # noqa: B008
        _classification(task)
        prompts = task_prompts(lm, task, 24, int(shots), int(seed))
        rows = isolation_experiment(lm, prompts, task.labels, k=int(k), seed=int(seed),
                                    progress=ctx.progress(progress, request, "flow", "isolating"))
        return isolation_figure(rows)

    def experiment(kind: str, task: Task, n: int, shots: int, seed: int, request: gr.Request,
                   progress: gr.Progress = gr.Progress()):  # noqa: B008
        _classification(task)
        step = ctx.progress(progress, request, "flow", kind)
        n, seed = int(n), int(seed)
        if kind == "re-weighting":
            train, prompts = fixed_demo_prompts(lm, task, n, None, seed, Template())
            return reweight_figure([reweight_experiment(lm, task, train, prompts, Template(), seed=seed,
                                                        progress=step)])
        if kind == "compression":
            _, prompts = fixed_demo_prompts(lm, task, n, int(shots), seed, Template())
            return compression_figure(compression_experiment(lm, task, prompts, progress=step))
        prompts = task_prompts(lm, task, n, int(shots), seed)
        return confusion_figure(confusion_experiment(lm, task.name, prompts, task.labels, progress=step))

    with gr.Tab("Anchor flow"):
        flow_state = gr.State(None)
        gr.Markdown(EXPLAIN)
        with gr.Row():
            n_prompts = gr.Slider(1, 40, value=4, step=1, label="prompts to average")
            flow_btn = gr.Button("Compute flow", variant="primary")
            stop = gr.Button("Cancel")
        curves = gr.Plot(label="flow per layer")
        layer_slider = gr.Slider(0, lm.n_layers - 1, value=lm.n_layers // 2, step=1, label="layer")
        arcs = gr.Plot(label="one prompt's anchor flow")
        gr.Markdown("**Isolation**: block label words (or as many random tokens) from earlier tokens in the "
                    "first or last K layers. Loyalty = agreement with the unmodified model.")
        with gr.Row():
            iso_k = gr.Slider(1, lm.n_layers, value=min(5, lm.n_layers), step=1, label="K layers")
            iso_btn = gr.Button("Run isolation")
        iso_plot = gr.Plot(label="isolation")
        gr.Markdown("**Using the anchors**: *re-weighting* learns one scale per layer, head and label word "
                    "from 4 examples per class; *compression* answers against a KV cache kept only at label "
                    "words and formatting tokens; *confusion* compares how close the label words' keys sit "
                    "with which classes the model confuses.")
        with gr.Row():
            kind = gr.Radio(["re-weighting", "compression", "confusion"], value="re-weighting", label="experiment")
            n_held = gr.Slider(8, 200, value=40, step=1, label="held-out queries")
            run = gr.Button("Run experiment")
        plot = gr.Plot(label="anchor experiment")
    on(flow_btn.click, flow, [page.task, n_prompts, page.shots, page.seed], [curves, arcs, flow_state, layer_slider],
       "flow", JOBS)
    on(layer_slider.release, flow_layer, [flow_state, layer_slider], arcs, False)
    on(iso_btn.click, isolate, [page.task, iso_k, page.shots, page.seed], iso_plot, "isolation", JOBS)
    on(run.click, experiment, [kind, page.task, n_held, page.shots, page.seed], plot, "anchor_experiment", JOBS)
    ctx.cancel_button(stop, "flow")
