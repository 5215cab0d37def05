"""The Evaluate tab: score chosen methods on a seeded held-out split of the visitor's task, timed in one run; the
results as a table, a chart, CSV and JSON downloads (the CLI's `--json` format), item by item, and which items
only one of two methods gets right. A built-in task shows its shipped run (`icl-lab prebuild`) at once."""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd
import plotly.graph_objects as go

from icr_app.app.answers import Page
from icr_app.app.context import JOBS, AppContext, on
from icr_app.app.exports import csv_file, json_file
from icr_app.app.figures import eval_bars
from icr_app.core.tasks import Task, split
from icr_app.evaluate import EvalReport, MethodResult, evaluate
from icr_app.methods import REGISTRY
from icr_app.prebuilt import EVALUATE as DEFAULTS
from icr_app.views.note import note_figure


def report_from(data: dict[str, Any]) -> EvalReport:
    return EvalReport(**{**data, "methods": {k: MethodResult(**v) for k, v in data["methods"].items()}})


def results_table(report: EvalReport) -> pd.DataFrame:
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


def item_table(report: EvalReport, task: Task) -> pd.DataFrame:
    """One row per test item (the same split `evaluate` scored), ✓ or ✗ per method."""
    _, test = split(task, report.n_test, report.seed, min_train=2)
    ok = {name: r.correct for name, r in report.methods.items() if r.error is None}
    rows = [{"input": e.input, "gold": e.output, **{m: "✓" if c[i] else "✗" for m, c in ok.items()}}
            for i, e in enumerate(test.examples[: len(next(iter(ok.values()), []))])]
    return pd.DataFrame(rows)


def agreement(report: EvalReport, task: Task, a: str, b: str) -> tuple[str, pd.DataFrame]:
    """How two methods split the items, and the items only one of them gets right."""
    ra, rb = report.methods.get(a), report.methods.get(b)
    if ra is None or rb is None or ra.error or rb.error:
        return f"_{a} and {b} must both be in the run and have served the task_", pd.DataFrame()
    _, test = split(task, report.n_test, report.seed, min_train=2)
    pairs = list(zip(test.examples, ra.correct, rb.correct))
    both, neither = sum(x and y for _, x, y in pairs), sum(not x and not y for _, x, y in pairs)
    only = [{"input": e.input, "gold": e.output, "right": a if x else b} for e, x, y in pairs if x != y]
    n_a = sum(r["right"] == a for r in only)
    text = (f"both right on **{both}**, both wrong on **{neither}**, only **{a}** on **{n_a}**, only **{b}** on "
            f"**{len(only) - n_a}** of {len(pairs)} items")
    return text, pd.DataFrame(only)


def _empty() -> go.Figure:
    return note_figure("press Evaluate (a built-in task shows its shipped run)")


def build_tab(ctx: AppContext, page: Page) -> None:
    def shown(views: dict, task: Task, a: str, b: str):
        data = views.get("evaluate")
        if data is None:
            return pd.DataFrame(), _empty(), pd.DataFrame(), "", pd.DataFrame()
        report = report_from(data)
        return results_table(report), eval_bars(report), item_table(report, task), *agreement(report, task, a, b)

    def run_eval(task: Task, views: dict, chosen: list[str], n_test: int, shots: int, seed: int, a: str, b: str,
                 request: gr.Request, progress: gr.Progress = gr.Progress()):  # noqa: B008
        if not chosen:
            raise gr.Error("choose at least one method")
        report = evaluate(ctx.lm, task, chosen, n_test=int(n_test), seed=int(seed), shots=int(shots),
                          progress=ctx.progress(progress, request, "evaluate", "evaluating"))
        views = {**views, "evaluate": report.to_json()}
        return views, *shown(views, task, a, b)

    def download(views: dict, request: gr.Request) -> tuple[str | None, str | None]:
        data = views.get("evaluate")
        if data is None:
            raise gr.Error("nothing evaluated yet")
        folder = ctx.session_dir(request)
        return (json_file(folder / "evaluation.json", data),
                csv_file(folder / "evaluation.csv", results_table(report_from(data))))

    names = list(REGISTRY)
    with gr.Tab("Evaluate"):
        gr.Markdown("Scores the methods on a seeded held-out split of the task; latency is measured in the same run "
                    "(after an untimed warm-up), so the ratios are fair. Methods that learn from examples are built "
                    "on the train split. Reading guide: compare accuracy at a glance, then the per-item table for "
                    "where two methods disagree.")
        with gr.Row():
            chosen = gr.CheckboxGroup(names, value=DEFAULTS["methods"], label="methods")
            n_test = gr.Slider(4, 200, value=DEFAULTS["n_test"], step=1, label="held-out queries")
        with gr.Row():
            run = gr.Button("Evaluate", variant="primary")
            stop = gr.Button("Cancel")
        table = gr.Dataframe(label="results")
        plot = gr.Plot(_empty(), label="accuracy per method")
        with gr.Row():
            export = gr.Button("Download the results (JSON, CSV)")
            json_out = gr.File(label="results as JSON (the CLI's --json)", interactive=False)
            csv_out = gr.File(label="results as CSV", interactive=False)
        items = gr.Dataframe(label="item by item (✓ right, ✗ wrong)", max_height=300)
        with gr.Row():
            a = gr.Dropdown(names, value="zero-shot", label="compare")
            b = gr.Dropdown(names, value="few-shot", label="with")
        split_text = gr.Markdown("")
        only = gr.Dataframe(label="the items only one of the two gets right", max_height=300)
    outs = [table, plot, items, split_text, only]
    on(run.click, run_eval, [page.task, page.views, chosen, n_test, page.shots, page.seed, a, b],
       [page.views, *outs], "evaluate", JOBS)
    ctx.cancel_button(stop, "evaluate")
    for control in (a, b):
        control.change(shown, [page.views, page.task, a, b], outs, queue=False)
    for event in page.task_changed:
        event.then(shown, [page.views, page.task, a, b], outs, queue=False)
    export.click(download, page.views, [json_out, csv_out], queue=False)
