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
from icr_app.app.i18n import method_label, method_title, say, t
from icr_app.app.messages import translated_error
from icr_app.app.task_notes import task_note
from icr_app.core.prompts import SHOTS
from icr_app.core.tasks import DEFAULT_TASK, HF_PREFIX, Task, builtin_names, builtin_task, load_task, make_task
from icr_app.core.taskspecs import available_specs
from icr_app.methods import DEFAULT_PANELS, REGISTRY, build_method
from icr_app.methods.base import BuildError, Method
from icr_app.prebuilt import DEFAULT_QUERY, Answer, example_query, timed_answer

MAX_BATCH = 50


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
    kind = (say("describe.classification", n=len(task.labels), labels=", ".join(task.labels[:12]))
            if task.kind == "classification" else say("describe.open"))
    return say("describe", name=task.name, n=len(task.examples), kind=kind)


def task_choices() -> list[str]:
    """The task picker's entries: the built-in tasks, then the dataset specs that have a local copy here."""
    return builtin_names() + [HF_PREFIX + name for name in available_specs()]


def query_for(task: Task, query: str) -> str:
    """The query to ask after picking `task`: its example query (a dataset's first test item), unless the visitor
    typed their own (an empty box gets the example too, so the pick still answers)."""
    untouched = {"", *(example_query(n) for n in builtin_names())}
    if (query or "").strip() not in untouched:
        return query
    return task.test_examples[0].input if task.test_examples else example_query(task.name)


def method_for(ctx: AppContext, name: str, task: Task, built: dict[str, Method], shots: int, seed: int
               ) -> Method | None:
    """The method to answer with: built now when that is free, else the visitor's built one for the current
    model (or None)."""
    if not REGISTRY[name].instant:
        return ctx.built_method(built, name)
    return prebuilt.instant_method(ctx.lm, task, name, shots, seed)


def not_built_note(built: dict[str, Method], name: str) -> str:
    """Why method `name` has no built method here: never built, or dropped with a model the page released."""
    model = getattr(built, "dropped", {}).get(name)
    return say("not_built") if model is None else say("dropped_with_model", title=method_title(name), model=model)


def panel_text(name: str, answer: Answer, model: str) -> str:
    spec, pred = REGISTRY[name], answer.prediction
    facts = [say("fact.model", model=model), say("fact.ms", ms=answer.seconds * 1000),
             say("fact.prompt", n=pred.prompt_tokens)]
    if answer.stored_parameters:
        facts.append(say("fact.stored", n=answer.stored_parameters))
    if answer.trainable_parameters:
        facts.append(say("fact.trained", n=answer.trainable_parameters))
    if answer.build_s and not spec.instant:  # an instant method is "built" in microseconds: nothing to say
        facts.append(say("fact.built", s=answer.build_s))
    if answer.shipped:
        facts.append(say("fact.shipped"))
    return (f"### {method_title(name)}\n**{pred.prediction or say('empty')}**\n\n" + " · ".join(facts)
            + f"\n\n<sub>{say('kind.' + spec.kind)}</sub>")


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
    """One method's answer to one query: (markdown, probability figure, prompt used), each naming the model that
    made it; errors stay in the panel."""
    model = ctx.lm.name
    title = f"{method_title(name)} · {model}"
    try:
        answer = predict_one(ctx, name, task, built, query, shots, seed)
    except Exception as err:  # this method cannot serve the task: say why here, the other panels still answer
        return (f"### {title}\n_{say('cannot_answer', err=translated_error(err))}_",
                label_prob_bars(None, title, say("not_available"), say), "")
    if answer is None:
        return (f"### {title}\n_{not_built_note(built, name)}_",
                label_prob_bars(None, title, say("not_built_yet"), say), "")
    pred = answer.prediction
    bars = label_prob_bars(pred.label_probs, title, say("bars.open"), say)
    return panel_text(name, answer, model), bars, pred.prompt


@dataclass
class Top:
    """The top section's components: pickers, query and settings, buttons, and each method's panel."""

    model: gr.Dropdown
    builtin: gr.Dropdown
    upload: gr.File
    info: gr.Markdown
    table: gr.Dataframe
    use_table: gr.Button
    query: gr.Textbox
    shots: gr.Slider
    seed: gr.Number
    examples: gr.Examples
    shown: gr.CheckboxGroup
    ask: gr.Button
    build: gr.Button
    build_stop: gr.Button
    build_info: gr.Markdown
    panels: dict[str, list]  # {method: [markdown, probability plot, prompt]}
    columns: list[gr.Column]
    batch: gr.Textbox
    ask_batch: gr.Button
    batch_table: gr.Dataframe

    @property
    def panel_outputs(self) -> list:
        return [c for name in REGISTRY for c in self.panels[name]]


def show(chosen: list[str]):
    return [gr.update(visible=name in chosen) for name in REGISTRY]


class Handlers:
    """What the top section's events run, over the app's context (Gradio calls the bound methods)."""

    def __init__(self, ctx: AppContext) -> None:
        self.ctx = ctx

    def note(self, task: Task, description: str | None = None) -> str:
        """The task's description, with why its answers are weak when the model cannot read its language."""
        return task_note(self.ctx.lm, task, description or describe(task))

    def load_upload(self, path: str | None):
        if not path:
            raise gr.Error(say("error.no_file"))
        task = load_task(path)
        return task, task_table(task), self.note(task), {}, {}

    def load_table(self, df: pd.DataFrame):
        if df is None or len(df.columns) < 2:
            raise gr.Error(say("error.table_columns"))
        cells = df.iloc[:, :2].itertuples(index=False)
        rows = [("" if x is None else str(x), "" if y is None else str(y)) for x, y in cells]
        task = make_task("edited table", [r for r in rows if any(v.strip() for v in r)])
        return task, self.note(task), {}, {}

    def shipped(self, task: Task, is_builtin: bool) -> tuple[dict, dict]:
        if not is_builtin:
            return {}, {}
        return self.ctx.hold(prebuilt.load_methods(self.ctx.lm, task.name)), prebuilt.load_views(self.ctx.lm, task.name)

    def answers(self, task: Task, built: dict, query: str, shots: int, seed: int, names: list[str]) -> list:
        """The panel outputs with the answers of the methods `names`; the other panels skipped."""
        update = [gr.skip()] * (3 * len(REGISTRY))
        for i, name in enumerate(REGISTRY):
            if name in names:
                update[3 * i: 3 * i + 3] = answer_panel(self.ctx, name, task, built, clip_query(query), shots, seed)
        return update

    def pick_builtin(self, name: str, query: str, shots: int, seed: int, chosen: list[str]):
        """Load the picked task (a built-in one with its shipped methods and views) and answer it in every shown
        panel, all in one run: picking a task is the page's most common action, and each extra event costs a round
        trip."""
        task = load_task(name)
        built, views = self.shipped(task, name in builtin_names())
        query = query_for(task, query)
        return (task, task_table(task), self.note(task), built, views, query,
                *self.answers(task, built, query, shots, seed, chosen))

    def switch_model(self, name: str, task: Task, request: gr.Request,
                     progress: gr.Progress = gr.Progress()):  # noqa: B008
        """This visitor's model becomes `name` (the others keep theirs), with the shipped methods and views for it."""
        progress(0, desc=say("info.loading_model", name=name))
        self.ctx.switch(name, request)
        description = say("describe.model", description=describe(task), model=self.ctx.lm.name)
        return *self.shipped(task, task.name in builtin_names()), self.note(task, description)

    def answerer(self, name: str):
        def answer(task: Task, built: dict, query: str, shots: int, seed: int, chosen: list[str]):
            if name not in chosen:
                return gr.skip(), gr.skip(), gr.skip()
            return answer_panel(self.ctx, name, task, built, clip_query(query), shots, seed)
        return answer

    def answer_all(self, task: Task, built: dict, query: str, shots: int, seed: int, chosen: list[str]):
        """Every shown panel answers in turn, each shown as soon as it has. One run per change, so the model work
        chained after it (the tour, the ICR tab) waits for the panels instead of taking turns with them."""
        shown_here = [name for name in REGISTRY if name in chosen]
        for name in shown_here:
            yield self.answers(task, built, query, shots, seed, [name])
        if not shown_here:
            yield [gr.skip()] * (3 * len(REGISTRY))

    def build_methods(self, task: Task, built: dict, chosen: list[str], shots: int, seed: int, request: gr.Request,
                      progress: gr.Progress = gr.Progress()):  # noqa: B008
        lm = self.ctx.lm
        todo = [n for n in chosen if not REGISTRY[n].instant and self.ctx.built_method(built, n) is None]
        built, base, notes = dict(built), built, []
        for name in todo:
            title = method_title(name)
            step = self.ctx.progress(progress, request, "build", say("building", title=title))
            try:
                built[name] = build_method(lm, task, name, seed=seed, shots=shots, progress=step)
            except BuildError as err:  # one method that cannot be built never stops the others
                notes.append(say("cannot_build", title=title, err=err))
                continue
            notes.append(say("built_note", title=title, s=built[name].build_s))
        notes = [say("built_note.model", note=note, model=lm.name) for note in notes]
        return self.ctx.hold(built, base), "\n\n".join(notes) or say("nothing_to_build")

    def answer_batch(self, task: Task, built: dict, text: str, shots: int, seed: int, chosen: list[str]):
        queries = [clip_query(q) for q in (text or "").splitlines() if q.strip()]
        if not queries:
            raise gr.Error(say("error.no_batch"))
        if len(queries) > MAX_BATCH:
            gr.Warning(say("warning.batch_cut", n=MAX_BATCH))
            queries = queries[:MAX_BATCH]
        columns_out = {say("batch.model"): [self.ctx.lm.name] * len(queries), say("batch.query"): queries}
        for name in chosen:
            method = method_for(self.ctx, name, task, built, shots, seed)
            if method is not None:
                columns_out[name] = [p.prediction for p in method.predict(queries)]
        return pd.DataFrame(columns_out)


def task_controls(ctx: AppContext, first: Task) -> dict[str, Any]:
    """The model and task pickers, the editable examples, the query and its settings, the one-click queries."""
    with gr.Row():
        # one model offered: nothing to pick
        model = gr.Dropdown(ctx.model_choices, value=ctx.default, label=t("model"), scale=1,
                            visible=len(ctx.model_choices) > 1)
        builtin = gr.Dropdown(task_choices(), value=DEFAULT_TASK, label=t("builtin_task"), scale=1)
        upload = gr.File(label=t("upload"),
                         file_types=[".csv", ".tsv", ".json", ".jsonl"], type="filepath", scale=2)
    info = gr.Markdown(describe(first))
    with gr.Accordion(t("examples_editable"), open=False):
        table = gr.Dataframe(task_table(first), headers=["input", "output"], interactive=True, max_height=300,
                             label=t("examples"))
        use_table = gr.Button(t("use_table"))
    with gr.Row():
        query = gr.Textbox(label=t("query"), value=DEFAULT_QUERY, lines=2, scale=4)
        with gr.Column(scale=1):
            shots = gr.Slider(1, 20, value=SHOTS, step=1, label=t("shots"))
            seed = gr.Number(0, precision=0, label=t("seed"))
    examples = gr.Examples([[name, example_query(name)] for name in builtin_names()], [builtin, query],
                           label=t("one_click"), examples_per_page=6)
    examples.dataset.headers = []  # Gradio shows a Dataset's headers untranslated; its label names the columns
    return {"model": model, "builtin": builtin, "upload": upload, "info": info, "table": table,
            "use_table": use_table, "query": query, "shots": shots, "seed": seed, "examples": examples}


def method_panels() -> dict[str, Any]:
    """The methods to show, the Answer and Build buttons, one panel per registered method, and the batch table."""
    shown = gr.CheckboxGroup([(method_label(name), name) for name in REGISTRY], value=list(DEFAULT_PANELS),
                             label=t("shown"))
    with gr.Row():
        ask = gr.Button(t("answer"), variant="primary")
        build = gr.Button(t("build_selected"))
        build_stop = gr.Button(t("cancel_build"))
    build_info = gr.Markdown("")
    panels, columns = {}, []
    with gr.Row():
        for name in REGISTRY:
            with gr.Column(min_width=220, visible=name in DEFAULT_PANELS, elem_classes="method-panel") as col:
                md = gr.Markdown("### " + method_label(name))
                plot = gr.Plot(label=f"{name} " + t("label_probabilities"))
                with gr.Accordion(t("prompt_used"), open=False):
                    prompt = gr.Textbox(lines=6, show_label=False, max_lines=20)
                panels[name] = [md, plot, prompt]
            columns.append(col)
    with gr.Accordion(t("batch"), open=False):
        batch = gr.Textbox(label=t("batch_queries"), lines=5)
        ask_batch = gr.Button(t("answer_all"))
        batch_table = gr.Dataframe(label=t("batch_table"))
    return {"shown": shown, "ask": ask, "build": build, "build_stop": build_stop, "build_info": build_info,
            "panels": panels, "columns": columns, "batch": batch, "ask_batch": ask_batch, "batch_table": batch_table}


def build_section(ctx: AppContext, demo: gr.Blocks) -> Page:
    """Model and task pickers, query, settings, the side-by-side panels and the batch table. When the page opens
    (`demo.load`), the default task's shipped methods and views are loaded and every panel answers."""
    first = builtin_task(DEFAULT_TASK)
    initial_views = prebuilt.load_views(ctx.lm, DEFAULT_TASK)
    task, built, views = gr.State(first), gr.State({}), gr.State(initial_views)
    top = Top(**task_controls(ctx, first), **method_panels())
    changed, answered = wire(ctx, demo, top, task, built, views)
    return Page(task, built, views, first, initial_views, top.query, top.shots, top.seed, top.shown, top.ask, changed,
                answered)


def wire(ctx: AppContext, demo: gr.Blocks, top: Top, task: gr.State, built: gr.State, views: gr.State
         ) -> tuple[list, list]:
    """The section's events; returns the events after which the task, model or views changed, and for each the
    event after which the shown panels have answered again (`Page.task_changed`, `Page.task_answered`)."""
    do, panel_outputs = Handlers(ctx), top.panel_outputs
    reset = [task, top.table, top.info, built, views]
    inputs = [task, built, top.query, top.shots, top.seed, top.shown]
    picked = [top.builtin, top.query, top.shots, top.seed, top.shown], [*reset, top.query, *panel_outputs]
    # Progress shows on each panel's heading only: a timer on all 27 outputs kept the browser redrawing
    # thousands of times per answer, on the cores the model needs.
    headings = {"show_progress_on": [top.panels[name][0] for name in REGISTRY], "show_progress": "minimal"}
    # `select`, not `change`: a one-click example sets the picker too, and its own event loads the task
    answered_too = [on(demo.load, do.pick_builtin, *picked, False, **headings),
                    on(top.builtin.select, do.pick_builtin, *picked, "load_builtin", **headings),
                    on(top.examples.load_input_event.then, do.pick_builtin, *picked, False, **headings)]
    changed = [on(top.upload.upload, do.load_upload, top.upload, reset, "load_upload", TASKS),
               on(top.use_table.click, do.load_table, top.table, [task, top.info, built, views], "load_table", TASKS),
               on(top.model.change, do.switch_model, [top.model, task], [built, views, top.info], "switch_model",
                  JOBS)]
    shown_changed = top.shown.change(show, top.shown, top.columns, queue=False)
    rebuilt = on(top.build.click, do.build_methods, [task, built, top.shown, top.shots, top.seed],
                 [built, top.build_info], "build_methods", JOBS)
    for name in REGISTRY:
        first = top.panels[name][0]
        on(top.ask.click, do.answerer(name), inputs, top.panels[name], f"answer_{name.replace('-', '_')}",
           show_progress_on=first)
        on(top.query.submit, do.answerer(name), inputs, top.panels[name], False, show_progress_on=first)
    # a new task, model, set of methods or build: every shown panel answers again, in one run
    answered = [on(event.then, do.answer_all, inputs, panel_outputs, False, **headings)
                for event in [*changed, shown_changed, rebuilt]]
    ctx.cancel_button(top.build_stop, "build")
    on(top.ask_batch.click, do.answer_batch, [task, built, top.batch, top.shots, top.seed, top.shown],
       top.batch_table, "answer_batch")
    changed, answered = answered_too + changed, answered_too + answered
    return changed, answered[: len(changed)]
