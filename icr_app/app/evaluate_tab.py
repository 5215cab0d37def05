"""The Evaluate tab: score chosen methods on a seeded held-out split of the visitor's task, timed in one run; the
results as a table, a chart, CSV and JSON downloads (the CLI's `--json` format), item by item, and which items
only one of two methods gets right. A built-in task shows its shipped run (`icl-lab prebuild`) at once."""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd
import plotly.graph_objects as go

from icr_app.app.context import JOBS, AppContext, on
from icr_app.app.exports import csv_file, json_file
from icr_app.app.figures import eval_bars, named
from icr_app.app.i18n import say, t
from icr_app.app.page import Page
from icr_app.core.tasks import Task, split
from icr_app.evaluation import EvalReport, MethodResult, evaluate
from icr_app.figures.note import note_figure
from icr_app.methods import REGISTRY
from icr_app.prebuilt import EVALUATE as DEFAULTS
from icr_app.stats import paired, significant, wilson


def report_from(data: dict[str, Any]) -> EvalReport:
    report = EvalReport(**{**data, "methods": {k: MethodResult(**v) for k, v in data["methods"].items()}})
    # runs shipped before intervals were reported carry the per-item results they are computed from
    for r in report.methods.values():
        if r.ci95 is None and r.correct:
            r.ci95 = wilson(sum(r.correct), len(r.correct))
    return report


def results_table(report: EvalReport) -> pd.DataFrame:
    """One row per method, naming the model that ran it; the column headers in the visitor's language (the CSV
    download has the same ones)."""
    vs_base = {c["a"]: c for c in report.paired if c["b"] == "zero-shot"}
    rows = []
    for name, r in report.methods.items():
        if r.error is not None:
            rows.append({say("evaluate.col.method"): name, say("evaluate.col.error"): r.error})
            continue
        c = vs_base.get(name)
        rows.append({say("evaluate.col.method"): name, say("evaluate.col.accuracy"): round(r.accuracy, 3),
                     say("evaluate.col.interval"): f"{r.ci95[0]:.3f} – {r.ci95[1]:.3f}",
                     say("evaluate.col.vs_zero_shot"): c and _versus(c),
                     say("evaluate.col.first_token"): round(r.first_token_accuracy, 3),
                     say("evaluate.col.latency"): round(r.latency_s * 1000, 1),
                     say("evaluate.col.time_ratio"): None if r.latency_ratio_to_zero_shot is None
                     else round(r.latency_ratio_to_zero_shot, 2),
                     say("evaluate.col.prompt_tokens"): round(r.mean_prompt_tokens, 1),
                     say("evaluate.col.build_s"): round(r.build_s, 1),
                     say("evaluate.col.stored"): r.stored_parameters,
                     say("evaluate.col.trained"): r.trainable_parameters})
    return pd.DataFrame(rows).assign(**{say("batch.model"): report.model})


def _versus(c: dict[str, Any]) -> str:
    """A paired comparison in a cell: the difference, McNemar's p, and "ns" where the test does not support it."""
    ns = "" if significant(c) else say("evaluate.ns")
    return f"{c['diff']:+.3f} (p = {c['p_mcnemar']:.2g}{ns})"


def item_table(report: EvalReport, task: Task) -> pd.DataFrame:
    """One row per test item (the same split `evaluate` scored), ✓ or ✗ per method."""
    _, test = split(task, report.n_test, report.seed, min_train=2)
    ok = {name: r.correct for name, r in report.methods.items() if r.error is None}
    rows = [{say("evaluate.col.input"): e.input, say("evaluate.col.gold"): e.output,
             **{m: "✓" if c[i] else "✗" for m, c in ok.items()}}
            for i, e in enumerate(test.examples[: len(next(iter(ok.values()), []))])]
    return pd.DataFrame(rows)


def agreement(report: EvalReport, task: Task, a: str, b: str) -> tuple[str, pd.DataFrame]:
    """How two methods split the items, and the items only one of them gets right."""
    ra, rb = report.methods.get(a), report.methods.get(b)
    if ra is None or rb is None or ra.error or rb.error:
        return say("evaluate.both_needed", a=a, b=b), pd.DataFrame()
    _, test = split(task, report.n_test, report.seed, min_train=2)
    pairs = list(zip(test.examples, ra.correct, rb.correct))
    both, neither = sum(x and y for _, x, y in pairs), sum(not x and not y for _, x, y in pairs)
    only = [(e, a if x else b) for e, x, y in pairs if x != y]
    n_a = sum(right == a for _, right in only)
    text = say("evaluate.split", both=both, neither=neither, a=a, n_a=n_a, b=b, n_b=len(only) - n_a, n=len(pairs))
    rows = [{say("evaluate.col.input"): e.input, say("evaluate.col.gold"): e.output, say("evaluate.col.right"): right}
            for e, right in only]
    test_text = paired_test_text(a, b, paired(ra.correct, rb.correct, report.items or None))
    return text + "\n\n" + test_text, pd.DataFrame(rows)


def paired_test_text(a: str, b: str, c: dict[str, Any]) -> str:
    verdict = say("evaluate.significant" if significant(c) else "evaluate.not_significant")
    return say("evaluate.paired", a=a, b=b, diff=c["diff"], lo=c["ci95"][0], hi=c["ci95"][1], p=c["p_mcnemar"],
               verdict=verdict)


def _empty() -> go.Figure:
    return note_figure(say("evaluate.empty"))


def build_tab(ctx: AppContext, page: Page) -> None:
    def shown(views: dict, task: Task, a: str, b: str):
        data = views.get("evaluate")
        if data is None:
            return pd.DataFrame(), _empty(), pd.DataFrame(), "", pd.DataFrame()
        report = report_from(data)
        return (results_table(report), named(eval_bars(report, say), report.model, say), item_table(report, task),
                *agreement(report, task, a, b))

    def run_eval(task: Task, views: dict, chosen: list[str], n_test: int, shots: int, seed: int, a: str, b: str,
                 request: gr.Request, progress: gr.Progress = gr.Progress()):  # noqa: B008
        if not chosen:
            raise gr.Error(say("error.no_method"))
        report = evaluate(ctx.lm, task, chosen, n_test=int(n_test), seed=int(seed), shots=int(shots),
                          progress=ctx.progress(progress, request, "evaluate", say("evaluate.evaluating")))
        views = {**views, "evaluate": report.to_json()}
        return views, *shown(views, task, a, b)

    def download(views: dict, request: gr.Request) -> tuple[str | None, str | None]:
        data = views.get("evaluate")
        if data is None:
            raise gr.Error(say("error.nothing_evaluated"))
        folder = ctx.session_dir(request)
        return (json_file(folder / "evaluation.json", data),
                csv_file(folder / "evaluation.csv", results_table(report_from(data))))

    names = list(REGISTRY)
    with gr.Tab(t("evaluate.tab")):
        gr.Markdown(t("evaluate.explain"))
        with gr.Row():
            chosen = gr.CheckboxGroup(names, value=DEFAULTS["methods"], label=t("evaluate.methods"))
            n_test = gr.Slider(4, 200, value=DEFAULTS["n_test"], step=1, label=t("held_out"))
        with gr.Row():
            run = gr.Button(t("evaluate.run"), variant="primary")
            stop = gr.Button(t("cancel"))
        table = gr.Dataframe(label=t("evaluate.results"))
        plot = gr.Plot(_empty(), label=t("evaluate.plot"))
        with gr.Row():
            export = gr.Button(t("evaluate.export"))
            json_out = gr.File(label=t("evaluate.json"), interactive=False)
            csv_out = gr.File(label=t("evaluate.csv"), interactive=False)
        items = gr.Dataframe(label=t("evaluate.items"), max_height=300)
        with gr.Row():
            a = gr.Dropdown(names, value="zero-shot", label=t("evaluate.compare"))
            b = gr.Dropdown(names, value="few-shot", label=t("evaluate.with"))
        split_text = gr.Markdown("")
        only = gr.Dataframe(label=t("evaluate.only"), max_height=300)
    outs = [table, plot, items, split_text, only]
    on(run.click, run_eval, [page.task, page.views, chosen, n_test, page.shots, page.seed, a, b],
       [page.views, *outs], "evaluate", JOBS)
    ctx.cancel_button(stop, "evaluate")
    for control in (a, b):
        control.change(shown, [page.views, page.task, a, b], outs, queue=False)
    for event in page.task_changed:
        event.then(shown, [page.views, page.task, a, b], outs, queue=False)
    export.click(download, page.views, [json_out, csv_out], queue=False)
