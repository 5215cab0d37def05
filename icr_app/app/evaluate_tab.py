"""The Evaluate tab: score chosen methods on a seeded held-out split of the visitor's task, timed in one run."""

from __future__ import annotations

import gradio as gr
import pandas as pd

from icr_app.app.answers import Page
from icr_app.app.context import JOBS, AppContext, on
from icr_app.core.tasks import Task
from icr_app.evaluate import evaluate
from icr_app.methods import REGISTRY
from icr_app.views.answers import eval_bars


def results_table(report) -> pd.DataFrame:  # noqa: ANN001 - an EvalReport
    rows = []
    for name, r in report.methods.items():
        if r.error is not None:
            rows.append({"method": name, "error": r.error})
            continue
        rows.append({"method": name, "accuracy": round(r.accuracy, 3),
                     "first-token accuracy": round(r.first_token_accuracy, 3),
                     "latency ms/query": round(r.latency_s * 1000, 1),
                     "× zero-shot time": None if r.latency_ratio_to_zero_shot is None
                     else round(r.latency_ratio_to_zero_shot, 2),
                     "prompt tokens": round(r.mean_prompt_tokens, 1), "build s": round(r.build_s, 1),
                     "stored parameters": r.stored_parameters, "trained parameters": r.trainable_parameters})
    return pd.DataFrame(rows)


def build_tab(ctx: AppContext, page: Page) -> None:
    def run_eval(task: Task, chosen: list[str], n_test: int, shots: int, seed: int, request: gr.Request,
                 progress: gr.Progress = gr.Progress()):  # noqa: B008
        if not chosen:
            raise gr.Error("choose at least one method")
        report = evaluate(ctx.lm, task, chosen, n_test=int(n_test), seed=int(seed), shots=int(shots),
                          progress=ctx.progress(progress, request, "evaluate", "evaluating"))
        return results_table(report), eval_bars(report)

    with gr.Tab("Evaluate"):
        gr.Markdown("Scores the methods on a seeded held-out split of the task; latency is measured in the same "
                    "run, so the ratios are fair. Methods that learn from examples are built on the train split.")
        with gr.Row():
            chosen = gr.CheckboxGroup(list(REGISTRY), value=["zero-shot", "few-shot"], label="methods")
            n_test = gr.Slider(4, 200, value=40, step=1, label="held-out queries")
        with gr.Row():
            run = gr.Button("Evaluate", variant="primary")
            stop = gr.Button("Cancel")
        table = gr.Dataframe(label="results")
        plot = gr.Plot()
    on(run.click, run_eval, [page.task, chosen, n_test, page.shots, page.seed], [table, plot], "evaluate", JOBS)
    ctx.cancel_button(stop, "evaluate")
