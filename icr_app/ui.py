"""The Gradio page: pick a task, ask a query, see every method side by side, look inside.

State that belongs to a user (their task, their SITE build, their cancel flag) lives in gr.State or
is keyed by the session; the model is shared and every change to it is scoped by `LoadedModel.lock`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path

import gradio as gr
import pandas as pd

from icr_app.demo_tasks import DEMO_TASKS
from icr_app.evaluate import METHODS, evaluate
from icr_app.methods import FewShot, Method, Prediction, ZeroShot
from icr_app.models import DEFAULT_MODEL, LoadedModel, load_model
from icr_app.scoring import LabelError
from icr_app.tasks import MAX_BYTES, Task, TaskError, builtin_task, make_task, parse_task_bytes
from icr_app.views.answers import eval_bars, label_prob_bars

MAX_QUERY_CHARS = 2000
PANELS = ("zero-shot", "few-shot")

INTRO = """# ICL Lab
Adapt a language model to a task from a handful of examples, and compare: **zero-shot** (just the
query), **few-shot** (examples in the prompt: explicit in-context learning) and implicit ICL methods that
inject what the examples teach inside the model so the prompt stays short.
1. Pick a task (built-in, uploaded, or edited in the table). 2. Type a query. 3. Compare the panels.
"""


class Cancelled(gr.Error):
    def __init__(self) -> None:
        super().__init__("cancelled")


_CANCEL: dict[str, threading.Event] = {}


def _cancel_flag(request: gr.Request | None) -> threading.Event:
    key = getattr(request, "session_hash", None) or "local"
    return _CANCEL.setdefault(key, threading.Event())


def _progress(progress: gr.Progress, flag: threading.Event, desc: str):
    """A progress wrapper for the backend that also raises when the user pressed Cancel."""
    flag.clear()

    def wrap(it: Iterable, **_: object) -> Iterable:
        for item in progress.tqdm(it, desc=desc):
            if flag.is_set():
                raise Cancelled()
            yield item

    return wrap


def task_table(task: Task) -> pd.DataFrame:
    return pd.DataFrame({"input": task.inputs, "output": task.outputs})


def describe(task: Task) -> str:
    kind = (f"classification over {len(task.labels)} labels: {', '.join(task.labels[:12])}"
            if task.kind == "classification" else "open task (answers are generated)")
    return f"**{task.name}**: {len(task.examples)} examples; {kind}"


def _user_error(err: Exception) -> gr.Error:
    return gr.Error(str(err))


def load_builtin(name: str) -> tuple[Task, pd.DataFrame, str]:
    task = builtin_task(name)
    return task, task_table(task), describe(task)


def load_upload(path: str | None) -> tuple[Task, pd.DataFrame, str]:
    if not path:
        raise gr.Error("no file uploaded")
    size = os.path.getsize(path)
    if size > MAX_BYTES:
        raise gr.Error(f"{Path(path).name}: {size / 1e6:.1f} MB is over the {MAX_BYTES // 2**20} MB limit")
    try:
        task = parse_task_bytes(Path(path).read_bytes(), Path(path).name)
    except TaskError as err:
        raise _user_error(err) from None
    return task, task_table(task), describe(task)


def load_table(df: pd.DataFrame) -> tuple[Task, str]:
    if df is None or len(df.columns) < 2:
        raise gr.Error("the table needs an input and an output column")
    rows = [(str(x) if x is not None else "", str(y) if y is not None else "")
            for x, y in df.iloc[:, :2].itertuples(index=False)]
    try:
        task = make_task("edited table", [r for r in rows if any(v.strip() for v in r)])
    except TaskError as err:
        raise _user_error(err) from None
    return task, describe(task)


def clip_query(query: str) -> str:
    query = (query or "").strip()
    if not query:
        raise gr.Error("type a query first")
    if len(query) > MAX_QUERY_CHARS:
        gr.Warning(f"the query was cut to its first {MAX_QUERY_CHARS} characters")
        query = query[:MAX_QUERY_CHARS]
    return query


def panel_text(name: str, pred: Prediction, seconds: float) -> str:
    return (f"### {name}\n**{pred.prediction or '(empty)'}**\n\n"
            f"{seconds * 1000:.0f} ms · prompt {pred.prompt_tokens} tokens")


def panel(name: str, method: Method, query: str) -> tuple[str, object, str]:
    """One method's answer to one query: (markdown, probability figure, prompt used)."""
    t0 = time.perf_counter()
    pred = method.predict([query])[0]
    return panel_text(name, pred, time.perf_counter() - t0), label_prob_bars(pred.label_probs, name), pred.prompt


def build_demo(lm: LoadedModel | str = DEFAULT_MODEL) -> gr.Blocks:
    lm = load_model(lm) if isinstance(lm, str) else lm
    first = builtin_task("sentiment")

    def explicit(name: str):
        def answer(task: Task, query: str, shots: int, seed: int):
            query = clip_query(query)
            try:
                method = ZeroShot(lm, task) if name == "zero-shot" else FewShot(lm, task, shots=int(shots),
                                                                                seed=int(seed))
            except LabelError as err:
                raise _user_error(err) from None
            return panel(name, method, query)
        return answer

    def run_eval(task: Task, chosen: list[str], n_test: int, shots: int, seed: int,
                 request: gr.Request, progress: gr.Progress = gr.Progress()):  # noqa: B008 (gradio injects it)
        if not chosen:
            raise gr.Error("choose at least one method")
        flag = _cancel_flag(request)
        try:
            report = evaluate(lm, task, chosen, n_test=int(n_test), seed=int(seed), shots=int(shots),
                              progress=_progress(progress, flag, "evaluating"))
        except (TaskError, LabelError) as err:
            raise _user_error(err) from None
        rows = [{"method": k, "accuracy": round(r.accuracy, 3), "latency ms/query": round(r.latency_s * 1000, 1),
                 "× zero-shot time": None if r.latency_ratio_to_zero_shot is None
                 else round(r.latency_ratio_to_zero_shot, 2),
                 "prompt tokens": round(r.mean_prompt_tokens, 1)} for k, r in report.methods.items()]
        return pd.DataFrame(rows), eval_bars(report)

    def cancel(request: gr.Request) -> None:
        _cancel_flag(request).set()

    with gr.Blocks(title="ICL Lab", delete_cache=(1800, 3600)) as demo:
        gr.Markdown(INTRO)
        task_state = gr.State(first)
        with gr.Row():
            builtin = gr.Dropdown(list(DEMO_TASKS), value="sentiment", label="Built-in task")
            upload = gr.File(label="…or upload CSV / TSV / JSON / JSONL (columns input, output)",
                             file_types=[".csv", ".tsv", ".json", ".jsonl"], type="filepath")
        info = gr.Markdown(describe(first))
        with gr.Accordion("Examples (editable)", open=False):
            table = gr.Dataframe(task_table(first), headers=["input", "output"], interactive=True,
                                 max_height=300, label="examples")
            use_table = gr.Button("Use this table as the task")
        with gr.Row():
            query = gr.Textbox(label="Query", value="An absolute joy from start to finish.", lines=2, scale=4)
            with gr.Column(scale=1):
                shots = gr.Slider(1, 20, value=10, step=1, label="few-shot demonstrations")
                seed = gr.Number(0, precision=0, label="seed")
        ask = gr.Button("Answer", variant="primary")
        outputs = []
        with gr.Row():
            for name in PANELS:
                with gr.Column():
                    md = gr.Markdown(f"### {name}")
                    plot = gr.Plot(label=f"{name} label probabilities")
                    with gr.Accordion("prompt used", open=False):
                        prompt = gr.Textbox(lines=6, show_label=False, max_lines=20)
                    outputs += [md, plot, prompt]
        with gr.Tab("Evaluate"):
            gr.Markdown("Scores the methods on a seeded held-out split of the task; latency is measured in the "
                        "same run, so the ratios are fair.")
            with gr.Row():
                chosen = gr.CheckboxGroup(list(METHODS), value=["zero-shot", "few-shot"], label="methods")
                n_test = gr.Slider(4, 200, value=40, step=1, label="held-out queries")
            with gr.Row():
                run = gr.Button("Evaluate", variant="primary")
                stop = gr.Button("Cancel")
            eval_table = gr.Dataframe(label="results")
            eval_plot = gr.Plot()

        upload.upload(load_upload, upload, [task_state, table, info], api_name="load_upload")
        use_table.click(load_table, table, [task_state, info], api_name="load_table")
        for i, name in enumerate(PANELS):
            fn, inputs = explicit(name), [task_state, query, shots, seed]
            ask.click(fn, inputs, outputs[3 * i: 3 * i + 3], api_name=f"answer_{name.replace('-', '_')}")
            query.submit(fn, inputs, outputs[3 * i: 3 * i + 3])
        builtin.change(load_builtin, builtin, [task_state, table, info], api_name="load_builtin")
        run.click(run_eval, [task_state, chosen, n_test, shots, seed], [eval_table, eval_plot], api_name="evaluate")
        stop.click(cancel, None, None, queue=False)
    return demo


def launch(model: LoadedModel | str = DEFAULT_MODEL, **kwargs) -> gr.Blocks:
    demo = build_demo(model)
    demo.queue(default_concurrency_limit=int(os.environ.get("ICL_LAB_CONCURRENCY", "4")), max_size=64)
    demo.launch(max_file_size=MAX_BYTES, **kwargs)
    return demo
