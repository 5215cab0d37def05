"""The top of the page: pick a model and a task, ask a query, and see the chosen methods answer side by side.

A method that costs nothing to build (zero-shot, few-shot, ICR) is built for each answer; the others are
built once per task (Build button, or their own tab) and kept in the visitor's `built` state. For a built-in
task the shipped prebuilt methods, views and answers to its one-click query (`icr_app.prebuilt`) are loaded the
moment it is picked, and every panel answers at once. A method that cannot answer says why in its own panel
while the others answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from icr_app import prebuilt
from icr_app.app.context import JOBS, TASKS, AppContext, clip_query, on
from icr_app.app.figures import label_prob_bars
from icr_app.core.prompts import SHOTS
from icr_app.core.tasks import DEFAULT_TASK, Task, builtin_names, builtin_task, load_task, make_task
from icr_app.methods import DEFAULT_PANELS, REGISTRY, BuildError, build_method
from icr_app.methods.base import Method
from icr_app.prebuilt import DEFAULT_QUERY, Answer, example_query, timed_answer

MAX_BATCH = 50
NOT_BUILT = "not built for this task yet: press “Build selected methods”"
KINDS = {"baseline": "baseline", "implicit": "implicit ICL: nothing added to the prompt",
         "fine-tuning": "explicit fine-tuning of weights, not implicit ICL"}
AFTER_ANSWERS = "drawn once the answer panels above have answered"  # live figures: the page is served first


@dataclass
class Page:
    """The components every tab reads: the visitor's task, built methods and cached views, and the settings."""

    task: gr.State
    built: gr.State  # {method name: Method built on the current task, for the current model}
    views: gr.State  # the mechanism views shipped for the current built-in task ({} otherwise)
    initial_task: Task  # the default task, and its views, drawn when the page is built
    initial_views: dict[str, Any]
    query: gr.Textbox
    shots: gr.Slider
    seed: gr.Number
    shown: gr.CheckboxGroup
    ask: gr.Button
    task_changed: list  # events after which the task, the model or the views changed (tabs redraw)
    task_answered: list  # for each of those, the event after which the shown panels have answered again


def task_table(task: Task) -> pd.DataFrame:
    return pd.DataFrame({"input": task.inputs, "output": task.outputs})


def describe(task: Task) -> str:
    kind = (f"classification over {len(task.labels)} labels: {', '.join(task.labels[:12])}"
            if task.kind == "classification" else "open task (answers are generated)")
    return f"**{task.name}**: {len(task.examples)} examples; {kind}"


def query_for(name: str, query: str) -> str:
    """The query to ask after picking built-in task `name`: its example query, unless the visitor typed their own
    (an empty box gets the example too, so the pick still answers)."""
    untouched = {"", *(example_query(n) for n in builtin_names())}
    return example_query(name) if (query or "").strip() in untouched else query


def method_for(ctx: AppContext, name: str, task: Task, built: dict[str, Method], shots: int, seed: int
               ) -> Method | None:
    """The method to answer with: built now when that is free, else the visitor's built one for the current
    model (or None)."""
    spec = REGISTRY[name]
    if not spec.instant:
        method = built.get(name)
        return method if method is not None and method.lm is ctx.lm else None
    return prebuilt.answering(ctx.lm, task, name, shots, seed)


def panel_text(name: str, answer: Answer) -> str:
    spec, pred = REGISTRY[name], answer.prediction
    facts = [f"{answer.seconds * 1000:.0f} ms", f"prompt {pred.prompt_tokens} tokens"]
    if answer.stored_parameters:
        facts.append(f"{answer.stored_parameters:,} stored parameters")
    if answer.trainable_parameters:
        facts.append(f"{answer.trainable_parameters:,} trained")
    if answer.build_s:
        facts.append(f"built in {answer.build_s:.1f} s")
    if answer.shipped:
        facts.append("answer shipped with the app, timed when it was made")
    return (f"### {spec.title}\n**{pred.prediction or '(empty)'}**\n\n" + " · ".join(facts)
            + f"\n\n<sub>{KINDS[spec.kind]}</sub>")


def predict_one(ctx: AppContext, name: str, task: Task, built: dict[str, Method], query: str, shots: int, seed: int
                ) -> Answer | None:
    """Method `name`'s answer to `query` (None when it is not built). A built-in task's one-click query has its
    answers shipped (`prebuilt.shipped_answer`). A method that needs no build answers the same for the same
    (model, task, query, shots, seed), so that answer is kept (`ctx.memo`) for the other panels and tabs that
    ask it again."""
    instant = REGISTRY[name].instant
    method = None if instant else method_for(ctx, name, task, built, shots, seed)
    if not instant and method is None:
        return None
    shipped = prebuilt.shipped_answer(ctx.lm, task, name, query, shots, seed, method)
    if shipped is not None:
        return shipped
    if method is not None:
        return timed_answer(method, query)
    return ctx.memo((name, task, query, int(shots), int(seed)),
                    lambda: timed_answer(method_for(ctx, name, task, built, shots, seed), query))


def answer_panel(ctx: AppContext, name: str, task: Task, built: dict[str, Method], query: str, shots: int,
                 seed: int) -> tuple[str, Any, str]:
    """One method's answer to one query: (markdown, probability figure, prompt used); errors stay in the panel."""
    title = REGISTRY[name].title
    try:
        answer = predict_one(ctx, name, task, built, query, shots, seed)
    except Exception as err:  # this method cannot serve the task: say why here, the other panels still answer
        return f"### {title}\n_cannot answer: {err}_", label_prob_bars(None, title, "not available"), ""
    if answer is None:
        return f"### {title}\n_{NOT_BUILT}_", label_prob_bars(None, title, "not built yet"), ""
    pred = answer.prediction
    return panel_text(name, answer), label_prob_bars(pred.label_probs, title), pred.prompt


def build_section(ctx: AppContext, demo: gr.Blocks) -> Page:
    """Model and task pickers, query, settings, the side-by-side panels and the batch table. When the page opens
    (`demo.load`), the default task's shipped methods and views are loaded and every panel answers."""
    first = builtin_task(DEFAULT_TASK)
    initial_views = prebuilt.load_views(ctx.lm, DEFAULT_TASK)
    task_state, built_state, views_state = gr.State(first), gr.State({}), gr.State(initial_views)
    with gr.Row():
        model = gr.Dropdown(ctx.model_choices, value=ctx.lm.name, label="Model", scale=1)
        builtin = gr.Dropdown(builtin_names(), value=DEFAULT_TASK, label="Built-in task", scale=1)
        upload = gr.File(label="…or upload CSV / TSV / JSON / JSONL (columns input, output)",
                         file_types=[".csv", ".tsv", ".json", ".jsonl"], type="filepath", scale=2)
    info = gr.Markdown(describe(first))
    with gr.Accordion("Examples (editable)", open=False):
        table = gr.Dataframe(task_table(first), headers=["input", "output"], interactive=True, max_height=300,
                             label="examples")
        use_table = gr.Button("Use this table as the task")
    with gr.Row():
        query = gr.Textbox(label="Query", value=DEFAULT_QUERY, lines=2, scale=4)
        with gr.Column(scale=1):
            shots = gr.Slider(1, 20, value=SHOTS, step=1, label="few-shot demonstrations")
            seed = gr.Number(0, precision=0, label="seed")
    examples = gr.Examples([[name, example_query(name)] for name in builtin_names()], [builtin, query],
                           label="one-click queries (a built-in task and one of its inputs)", examples_per_page=6)
    shown = gr.CheckboxGroup([(spec.title, name) for name, spec in REGISTRY.items()], value=list(DEFAULT_PANELS),
                             label="methods side by side")
    with gr.Row():
        ask = gr.Button("Answer", variant="primary")
        build_btn = gr.Button("Build selected methods")
        build_stop = gr.Button("Cancel build")
    build_info = gr.Markdown("")
    outputs: dict[str, list] = {}
    columns = []
    with gr.Row():
        for name, spec in REGISTRY.items():
            with gr.Column(min_width=220, visible=name in DEFAULT_PANELS, elem_classes="method-panel") as col:
                md = gr.Markdown(f"### {spec.title}")
                plot = gr.Plot(label=f"{name} label probabilities")
                with gr.Accordion("prompt used", open=False):
                    prompt = gr.Textbox(lines=6, show_label=False, max_lines=20)
                outputs[name] = [md, plot, prompt]
            columns.append(col)
    with gr.Accordion("A batch of queries", open=False):
        batch = gr.Textbox(label="one query per line", lines=5)
        ask_batch = gr.Button("Answer all")
        batch_table = gr.Dataframe(label="predictions of the chosen methods (the built ones, for those that build)")

    def shipped(task: Task, is_builtin: bool) -> tuple[dict, dict]:
        if not is_builtin:
            return {}, {}
        return prebuilt.load_methods(ctx.lm, task.name), prebuilt.load_views(ctx.lm, task.name)

    def answers(task: Task, built: dict, query: str, shots: int, seed: int, names: list[str]) -> list:
        """The panel outputs with the answers of the methods `names`; the other panels skipped."""
        update = [gr.skip()] * len(panel_outputs)
        for i, name in enumerate(REGISTRY):
            if name in names:
                update[3 * i: 3 * i + 3] = answer_panel(ctx, name, task, built, clip_query(query), shots, seed)
        return update

    def pick_builtin(name: str, query: str, shots: int, seed: int, chosen: list[str]):
        """Load a built-in task with its shipped methods and views, and answer it in every shown panel, all in one
        run: picking a task is the page's most common action, and each extra event costs a round trip."""
        task = builtin_task(name)
        built, views = shipped(task, True)
        query = query_for(name, query)
        return task, task_table(task), describe(task), built, views, query, *answers(task, built, query, shots,
                                                                                     seed, chosen)

    def load_upload(path: str | None):
        if not path:
            raise gr.Error("no file uploaded")
        task = load_task(path)
        return task, task_table(task), describe(task), {}, {}

    def load_table(df: pd.DataFrame):
        if df is None or len(df.columns) < 2:
            raise gr.Error("the table needs an input and an output column")
        cells = df.iloc[:, :2].itertuples(index=False)
        rows = [("" if x is None else str(x), "" if y is None else str(y)) for x, y in cells]
        task = make_task("edited table", [r for r in rows if any(v.strip() for v in r)])
        return task, describe(task), {}, {}

    def switch_model(name: str, task: Task):
        ctx.switch(name)
        return *shipped(task, task.name in builtin_names()), f"{describe(task)} · model **{ctx.lm.name}**"

    def show(chosen: list[str]):
        return [gr.update(visible=name in chosen) for name in REGISTRY]

    def answerer(name: str):
        def answer(task: Task, built: dict, query: str, shots: int, seed: int, chosen: list[str]):
            if name not in chosen:
                return gr.skip(), gr.skip(), gr.skip()
            return answer_panel(ctx, name, task, built, clip_query(query), shots, seed)
        return answer

    panel_outputs = [c for name in REGISTRY for c in outputs[name]]

    def answer_all(task: Task, built: dict, query: str, shots: int, seed: int, chosen: list[str]):
        """Every shown panel answers in turn, each shown as soon as it has. One run per change, so the model work
        chained after it (the tour, the ICR tab) waits for the panels instead of taking turns with them."""
        shown_here = [name for name in REGISTRY if name in chosen]
        for name in shown_here:
            yield answers(task, built, query, shots, seed, [name])
        if not shown_here:
            yield [gr.skip()] * len(panel_outputs)

    def build_methods(task: Task, built: dict, chosen: list[str], shots: int, seed: int, request: gr.Request,
                      progress: gr.Progress = gr.Progress()):  # noqa: B008
        lm = ctx.lm
        todo = [n for n in chosen if not REGISTRY[n].instant and (n not in built or built[n].lm is not lm)]
        built, notes = dict(built), []
        for name in todo:
            spec = REGISTRY[name]
            step = ctx.progress(progress, request, "build", f"building {spec.title}")
            try:
                method = build_method(lm, task, name, seed=seed, shots=shots, progress=step)
            except BuildError as err:  # one method that cannot be built never stops the others
                notes.append(f"{spec.title}: cannot be built for this task: {err}")
                continue
            built[name] = method
            notes.append(f"{spec.title}: built in {method.build_s:.1f} s")
        return built, "\n\n".join(notes) or "nothing to build: the chosen methods are built already or need nothing"

    def answer_batch(task: Task, built: dict, text: str, shots: int, seed: int, chosen: list[str]):
        queries = [clip_query(q) for q in (text or "").splitlines() if q.strip()]
        if not queries:
            raise gr.Error("type one query per line")
        if len(queries) > MAX_BATCH:
            gr.Warning(f"only the first {MAX_BATCH} queries are answered")
            queries = queries[:MAX_BATCH]
        columns_out: dict[str, list[str]] = {"query": queries}
        for name in chosen:
            method = method_for(ctx, name, task, built, shots, seed)
            if method is not None:
                columns_out[name] = [p.prediction for p in method.predict(queries)]
        return pd.DataFrame(columns_out)

    reset = [task_state, table, info, built_state, views_state]
    inputs = [task_state, built_state, query, shots, seed, shown]
    picked = [builtin, query, shots, seed, shown], [*reset, query, *panel_outputs]
    # Progress shows on each panel's heading only: a timer on all 27 outputs kept the browser redrawing
    # thousands of times per answer, on the cores the model needs.
    headings = {"show_progress_on": [outputs[name][0] for name in REGISTRY], "show_progress": "minimal"}
    # `select`, not `change`: a one-click example sets the picker too, and its own event loads the task
    answered_too = [on(demo.load, pick_builtin, *picked, False, **headings),
                    on(builtin.select, pick_builtin, *picked, "load_builtin", **headings),
                    on(examples.load_input_event.then, pick_builtin, *picked, False, **headings)]
    changed = [on(upload.upload, load_upload, upload, reset, "load_upload", TASKS),
               on(use_table.click, load_table, table, [task_state, info, built_state, views_state], "load_table",
                  TASKS),
               on(model.change, switch_model, [model, task_state], [built_state, views_state, info], "switch_model",
                  JOBS)]
    shown_changed = shown.change(show, shown, columns, queue=False)
    built = on(build_btn.click, build_methods, [task_state, built_state, shown, shots, seed], [built_state, build_info],
               "build_methods", JOBS)
    for name in REGISTRY:
        key = name.replace("-", "_")
        on(ask.click, answerer(name), inputs, outputs[name], f"answer_{key}", show_progress_on=outputs[name][0])
        on(query.submit, answerer(name), inputs, outputs[name], False, show_progress_on=outputs[name][0])
    # a new task, model, set of methods or build: every shown panel answers again, in one run
    answered = [on(event.then, answer_all, inputs, panel_outputs, False, **headings)
                for event in [*changed, shown_changed, built]]
    changed, answered = answered_too + changed, answered_too + answered
    ctx.cancel_button(build_stop, "build")
    on(ask_batch.click, answer_batch, [task_state, built_state, batch, shots, seed, shown], batch_table,
       "answer_batch")
    return Page(task_state, built_state, views_state, first, initial_views, query, shots, seed, shown, ask, changed,
                answered[: len(changed)])
