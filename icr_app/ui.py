"""The Gradio page: pick a task, ask a query, see every method side by side, look inside.

State that belongs to a user (their task, their SITE build, their files, their cancel flag) lives in
gr.State or is keyed by the session; the model is shared and every change to it is scoped by
`LoadedModel.lock`, so users never see each other's hooks.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import gradio as gr
import pandas as pd

from icr_app.anchors.compression import compression_experiment, fixed_demo_prompts
from icr_app.anchors.confusion import confusion_experiment
from icr_app.anchors.isolation import isolation_experiment
from icr_app.anchors.reweighting import reweight_experiment
from icr_app.anchors.saliency import information_flow, task_prompts
from icr_app.demo_tasks import DEMO_TASKS
from icr_app.evaluate import METHODS, evaluate
from icr_app.icr_method import ICR, cached_router
from icr_app.methods import FewShot, Method, Prediction, ZeroShot
from icr_app.models import DEFAULT_MODEL, LoadedModel, load_model
from icr_app.prompts import Template
from icr_app.rank1 import rank1_analysis
from icr_app.scoring import LabelError
from icr_app.site import SiteConfig, SiteMethod, SiteTask, build_site
from icr_app.site_artefact import load_site, save_site
from icr_app.tasks import MAX_BYTES, Task, TaskError, builtin_task, load_task, make_task
from icr_app.views.anchors import compression_figure, confusion_figure, isolation_figure, reweight_figure
from icr_app.views.answers import eval_bars, label_prob_bars
from icr_app.views.flow import anchor_flow_figure, flow_curves_figure
from icr_app.views.icr import routing_figures
from icr_app.views.rank1 import error_by_layer_figure, norm_vs_demos_figure, singular_values_figure, transfer_figure
from icr_app.views.site import alpha_heatmap

MAX_QUERY_CHARS = 2000
MAX_BATCH = 50
PANELS = ("zero-shot", "few-shot", "site", "icr")
TITLES = {"zero-shot": "Zero-shot", "few-shot": "Few-shot (explicit ICL)", "site": "SITE (task embedding)",
          "icr": "ICR (pretrained router)"}
USER_ERRORS = (TaskError, LabelError, ValueError)

INTRO = """# ICL Lab
Adapt a language model to a task from a handful of examples, and compare on the same query:
**zero-shot** (just the query), **few-shot** (examples in the prompt: explicit in-context learning),
**SITE** (the examples distilled into per-head task embeddings, injected at the last token) and **ICR**
(a router trained once on other tasks that bends attention along principal ICL directions, with no
examples at all). The implicit methods keep the prompt as short as zero-shot.

Pick a task (built-in, uploaded, or edited in the table) → type a query and press **Answer** →
build SITE for the task to fill its panel → open the tabs below to see *why* it works.
"""

EXPLAIN = {
    "site": "SITE averages each attention head's output at the last token over many few-shot prompts (the "
            "task embedding), then learns a weight α per head: how much of the embedding replaces the head's "
            "zero-shot output. Heads near 1 carry the task. Built on your examples in about a minute on a CPU.",
    "icr": "ICR adds a low-rank bias to the attention logits of the last third of the layers, along principal "
           "ICL directions (PIDs) found from many ICL prompts. A small router reads the query and sets α(x): how "
           "much to push along each direction, and γ(x): how much each head takes it. Trained once, reused here. "
           "On this small model the directions matter less than the paper finds: a router trained on a random "
           "basis of the same rank transfers as well (BENCHMARKS.md).",
    "flow": "Saliency A ⊙ ∂L/∂A tells how much each attention edge matters for the answer. Label words act as "
            "anchors: in shallow layers text flows into the label words (S_wp); in deep layers the answer reads "
            "them (S_pq). The curves average several prompts; the arcs show one prompt's strongest edges.",
    "rank1": "A prompt's context changes a block's MLP input at the query. That change equals a rank-1 update "
             "of the first MLP weights plus a residual patch: the context-free block with the patch reproduces "
             "the with-context output exactly. The patch is specific to its query: applied to another query it "
             "closes only part of that query's gap, thousands of times less exactly.",
}


class Cancelled(gr.Error):
    def __init__(self) -> None:
        super().__init__("cancelled")


_CANCEL: dict[tuple[str, str], threading.Event] = {}
_SESSION_DIRS: dict[str, Path] = {}


def _session(request: gr.Request | None) -> str:
    return getattr(request, "session_hash", None) or "local"


def _cancel_flag(request: gr.Request | None, kind: str) -> threading.Event:
    """One flag per session and kind of job, so Cancel on one tab never stops another tab's job."""
    return _CANCEL.setdefault((_session(request), kind), threading.Event())


def session_dir(request: gr.Request | None) -> Path:
    """A private temporary folder per browser session, removed when the session ends."""
    key = _session(request)
    if key not in _SESSION_DIRS:
        _SESSION_DIRS[key] = Path(tempfile.mkdtemp(prefix="icl-lab-"))
    return _SESSION_DIRS[key]


def end_session(request: gr.Request) -> None:
    key = _session(request)
    for flag in [k for k in _CANCEL if k[0] == key]:
        _CANCEL.pop(flag, None)
    folder = _SESSION_DIRS.pop(key, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _progress(progress: gr.Progress, flag: threading.Event, desc: str) -> Callable[..., Iterable]:
    """A progress wrapper for the backend that also raises when the user pressed Cancel."""
    flag.clear()

    def wrap(it: Iterable, **_: object) -> Iterable:
        for item in progress.tqdm(it, desc=desc):
            if flag.is_set():
                raise Cancelled()
            yield item

    return wrap


def user_errors(fn: Callable) -> Callable:
    """Turn the backend's input errors into gr.Error, so the page shows the message and keeps its state."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except USER_ERRORS as err:
            raise gr.Error(str(err)) from None
    return wrapped


def task_table(task: Task) -> pd.DataFrame:
    return pd.DataFrame({"input": task.inputs, "output": task.outputs})


def describe(task: Task) -> str:
    kind = (f"classification over {len(task.labels)} labels: {', '.join(task.labels[:12])}"
            if task.kind == "classification" else "open task (answers are generated)")
    return f"**{task.name}**: {len(task.examples)} examples; {kind}"


def load_builtin(name: str) -> tuple[Task, pd.DataFrame, str, None, str]:
    task = builtin_task(name)
    return task, task_table(task), describe(task), None, "_not built for this task yet_"


def load_upload(path: str | None) -> tuple[Task, pd.DataFrame, str, None, str]:
    if not path:
        raise gr.Error("no file uploaded")
    task = load_task(path)
    return task, task_table(task), describe(task), None, "_not built for this task yet_"


def load_table(df: pd.DataFrame) -> tuple[Task, str, None, str]:
    if df is None or len(df.columns) < 2:
        raise gr.Error("the table needs an input and an output column")
    cells = df.iloc[:, :2].itertuples(index=False)
    rows = [("" if x is None else str(x), "" if y is None else str(y)) for x, y in cells]
    task = make_task("edited table", [r for r in rows if any(v.strip() for v in r)])
    return task, describe(task), None, "_not built for this task yet_"


def clip_query(query: str) -> str:
    query = (query or "").strip()
    if not query:
        raise gr.Error("type a query first")
    if len(query) > MAX_QUERY_CHARS:
        gr.Warning(f"the query was cut to its first {MAX_QUERY_CHARS} characters")
        query = query[:MAX_QUERY_CHARS]
    return query


def panel_text(name: str, pred: Prediction, seconds: float) -> str:
    return (f"### {TITLES[name]}\n**{pred.prediction or '(empty)'}**\n\n"
            f"{seconds * 1000:.0f} ms · prompt {pred.prompt_tokens} tokens")


def panel(name: str, method: Method | None, query: str, missing: str = "") -> tuple[str, object, str]:
    """One method's answer to one query: (markdown, probability figure, prompt used)."""
    if method is None:
        return f"### {TITLES[name]}\n_{missing}_", label_prob_bars(None, TITLES[name], "not available yet"), ""
    t0 = time.perf_counter()
    pred = method.predict([query])[0]
    return panel_text(name, pred, time.perf_counter() - t0), label_prob_bars(pred.label_probs, TITLES[name]), \
        pred.prompt


def site_summary(site: SiteTask) -> str:
    m = site.meta
    return (f"SITE for **{m.task}**: {m.n_prompts} prompts × {m.n_demos} demos; {m.steps} steps "
            f"(best {m.best_step}); train loss {m.train_loss:.3f}, val loss {m.val_loss:.3f}; "
            f"built in {m.build_s:.0f} s")


def build_demo(lm: LoadedModel | str = DEFAULT_MODEL) -> gr.Blocks:
    """The whole page over one loaded model (the tests pass a tiny one)."""
    lm = load_model(lm) if isinstance(lm, str) else lm
    first = builtin_task("sentiment")
    try:
        router, router_note = cached_router(lm), ""
    except (OSError, ValueError) as err:  # no pretrained router for this model
        router, router_note = None, f"no pretrained router for {lm.name}: {err}"

    def explicit(name: str) -> Callable:
        def answer(task: Task, query: str, shots: int, seed: int):
            query = clip_query(query)
            method = ZeroShot(lm, task) if name == "zero-shot" else FewShot(lm, task, shots=int(shots), seed=int(seed))
            return panel(name, method, query)
        return answer

    def answer_site(site: SiteTask | None, query: str):
        method = None if site is None else SiteMethod(lm, site)
        return panel("site", method, clip_query(query), "press “Build SITE” (SITE tab) to learn this task")

    def answer_icr(task: Task, query: str):
        method = None if router is None else ICR(lm, task, router)
        return panel("icr", method, clip_query(query), router_note)

    def answer_batch(task: Task, site: SiteTask | None, text: str, shots: int, seed: int):
        queries = [clip_query(q) for q in (text or "").splitlines() if q.strip()]
        if not queries:
            raise gr.Error("type one query per line")
        if len(queries) > MAX_BATCH:
            gr.Warning(f"only the first {MAX_BATCH} queries are answered")
            queries = queries[:MAX_BATCH]
        methods: dict[str, Method | None] = {
            "zero-shot": ZeroShot(lm, task), "few-shot": FewShot(lm, task, shots=int(shots), seed=int(seed)),
            "site": None if site is None else SiteMethod(lm, site),
            "icr": None if router is None else ICR(lm, task, router),
        }
        table = {"query": queries}
        for name, method in methods.items():
            if method is not None:
                table[name] = [p.prediction for p in method.predict(queries)]
        return pd.DataFrame(table)

    def icr_maps(query: str):
        if router is None:
            raise gr.Error(router_note)
        query = clip_query(query)
        return routing_figures(router, query)

    def build(task: Task, steps: int, seed: int, request: gr.Request, progress: gr.Progress = gr.Progress()):  # noqa: B008
        cfg = SiteConfig(steps=int(steps), seed=int(seed))
        step = _progress(progress, _cancel_flag(request, "site"), "building SITE")
        site = build_site(lm, task, config=cfg, progress=step)
        path = save_site(site, session_dir(request) / f"site-{site.meta.task.replace('/', '_')}.safetensors")
        return site, alpha_heatmap(site), site_summary(site), str(path)

    def upload_site(path: str | None):
        if not path:
            raise gr.Error("no file uploaded")
        site = load_site(path, lm)
        return site, alpha_heatmap(site), site_summary(site)

    def flow(task: Task, n_prompts: int, shots: int, seed: int, request: gr.Request,
             progress: gr.Progress = gr.Progress()):  # noqa: B008
        if task.kind != "classification":
            raise gr.Error("the anchor views need a classification task (label words are the anchors)")
        prompts = task_prompts(lm, task, int(n_prompts), int(shots), int(seed))
        kept: list[tuple] = []
        result = information_flow(lm, task, prompts, _progress(progress, _cancel_flag(request, "flow"), "saliency"),
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
        if task.kind != "classification":
            raise gr.Error("isolation needs a classification task")
        prompts = task_prompts(lm, task, 24, int(shots), int(seed))
        rows = isolation_experiment(lm, prompts, task.labels, k=int(k), seed=int(seed),
                                    progress=_progress(progress, _cancel_flag(request, "flow"), "isolating"))
        return isolation_figure(rows)

    def anchor_experiment(kind: str, task: Task, n: int, shots: int, seed: int, request: gr.Request,
                          progress: gr.Progress = gr.Progress()):  # noqa: B008
        if task.kind != "classification":
            raise gr.Error("the anchor experiments need a classification task (label words are the anchors)")
        step = _progress(progress, _cancel_flag(request, "flow"), kind)
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

    def rank1(task: Task, layer: int, shots: int, seed: int, request: gr.Request,
              progress: gr.Progress = gr.Progress()):  # noqa: B008
        report = rank1_analysis(lm, task, layer=None, shots=min(int(shots), 8), seed=int(seed),
                                progress=_progress(progress, _cancel_flag(request, "rank1"), "rank-1"))
        layer = min(int(layer), lm.n_layers - 1)
        return (error_by_layer_figure(report), singular_values_figure(report, layer),
                norm_vs_demos_figure(report, layer), transfer_figure(report))

    def run_eval(task: Task, chosen: list[str], n_test: int, shots: int, seed: int,
                 request: gr.Request, progress: gr.Progress = gr.Progress()):  # noqa: B008
        if not chosen:
            raise gr.Error("choose at least one method")
        report = evaluate(lm, task, chosen, n_test=int(n_test), seed=int(seed), shots=int(shots),
                          progress=_progress(progress, _cancel_flag(request, "evaluate"), "evaluating"))
        rows = [{"method": k, "accuracy": round(r.accuracy, 3), "latency ms/query": round(r.latency_s * 1000, 1),
                 "× zero-shot time": None if r.latency_ratio_to_zero_shot is None
                 else round(r.latency_ratio_to_zero_shot, 2),
                 "prompt tokens": round(r.mean_prompt_tokens, 1), "build s": round(r.build_s, 1)}
                for k, r in report.methods.items()]
        return pd.DataFrame(rows), eval_bars(report)

    def canceller(kind: str) -> Callable:
        def cancel(request: gr.Request) -> None:
            _cancel_flag(request, kind).set()
        return cancel

    with gr.Blocks(title="ICL Lab", delete_cache=(1800, 3600)) as demo:
        gr.Markdown(INTRO)
        task_state, site_state, flow_state = gr.State(first), gr.State(None), gr.State(None)
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
        with gr.Accordion("A batch of queries", open=False):
            batch = gr.Textbox(label="one query per line", lines=5)
            ask_batch = gr.Button("Answer all")
            batch_table = gr.Dataframe(label="predictions per method (SITE once built, ICR when a router exists)")
        outputs: dict[str, list] = {}
        with gr.Row():
            for name in PANELS:
                with gr.Column(min_width=220):
                    md = gr.Markdown(f"### {TITLES[name]}")
                    plot = gr.Plot(label=f"{name} label probabilities")
                    with gr.Accordion("prompt used", open=False):
                        prompt = gr.Textbox(lines=6, show_label=False, max_lines=20)
                    outputs[name] = [md, plot, prompt]

        with gr.Tab("SITE head map"):
            gr.Markdown(EXPLAIN["site"])
            with gr.Row():
                site_steps = gr.Slider(20, 400, value=SiteConfig.steps, step=10, label="training steps")
                build_btn = gr.Button("Build SITE", variant="primary")
                build_stop = gr.Button("Cancel")
            site_info = gr.Markdown("_not built for this task yet_")
            site_map = gr.Plot(label="α per layer and head")
            with gr.Row():
                site_file = gr.File(label="download this SITE task (safetensors)", interactive=False)
                site_upload = gr.File(label="load a SITE task (.safetensors)", file_types=[".safetensors"],
                                      type="filepath")
        with gr.Tab("ICR routing"):
            gr.Markdown(EXPLAIN["icr"] + (f"\n\n**{router_note}**" if router_note else ""))
            with gr.Row():
                icr_alpha = gr.Plot(label="α(x)")
                icr_gamma = gr.Plot(label="γ(x)")
        with gr.Tab("Anchor flow"):
            gr.Markdown(EXPLAIN["flow"])
            with gr.Row():
                n_prompts = gr.Slider(1, 40, value=4, step=1, label="prompts to average")
                flow_btn = gr.Button("Compute flow", variant="primary")
                flow_stop = gr.Button("Cancel")
            flow_curves = gr.Plot(label="flow per layer")
            flow_layer_slider = gr.Slider(0, lm.n_layers - 1, value=lm.n_layers // 2, step=1, label="layer")
            flow_arcs = gr.Plot(label="one prompt's anchor flow")
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
                anchor_kind = gr.Radio(["re-weighting", "compression", "confusion"], value="re-weighting",
                                       label="experiment")
                anchor_n = gr.Slider(8, 200, value=40, step=1, label="held-out queries")
                anchor_btn = gr.Button("Run experiment")
            anchor_plot = gr.Plot(label="anchor experiment")
        with gr.Tab("Rank-1 view"):
            gr.Markdown(EXPLAIN["rank1"])
            with gr.Row():
                r1_layer = gr.Slider(0, lm.n_layers - 1, value=lm.n_layers // 2, step=1, label="layer to detail")
                r1_btn = gr.Button("Run the rank-1 check", variant="primary")
                r1_stop = gr.Button("Cancel")
            r1_err = gr.Plot(label="identity error per layer")
            with gr.Row():
                r1_sv = gr.Plot(label="singular values of ΔW")
                r1_norm = gr.Plot(label="|ΔW| as demonstrations are added")
            r1_transfer = gr.Plot(label="transfer to other queries")
        with gr.Tab("Evaluate"):
            gr.Markdown("Scores the methods on a seeded held-out split of the task; latency is measured in the "
                        "same run, so the ratios are fair. SITE is built on the train split here.")
            with gr.Row():
                chosen = gr.CheckboxGroup(list(METHODS), value=["zero-shot", "few-shot"], label="methods")
                n_test = gr.Slider(4, 200, value=40, step=1, label="held-out queries")
            with gr.Row():
                run = gr.Button("Evaluate", variant="primary")
                stop = gr.Button("Cancel")
            eval_table = gr.Dataframe(label="results")
            eval_plot = gr.Plot()

        def on(event: Callable, fn: Callable, inputs, outputs, api_name: str | bool) -> None:
            """Wire a handler: input errors shown as messages; every model job shares one concurrency group."""
            event(user_errors(fn), inputs, outputs, api_name=api_name, concurrency_id="model")

        task_outputs = [task_state, table, info, site_state, site_info]
        on(builtin.change, load_builtin, builtin, task_outputs, "load_builtin")
        on(upload.upload, load_upload, upload, task_outputs, "load_upload")
        on(use_table.click, load_table, table, [task_state, info, site_state, site_info], "load_table")
        answers = {
            "zero_shot": (explicit("zero-shot"), [task_state, query, shots, seed], outputs["zero-shot"]),
            "few_shot": (explicit("few-shot"), [task_state, query, shots, seed], outputs["few-shot"]),
            "site": (answer_site, [site_state, query], outputs["site"]),
            "icr": (answer_icr, [task_state, query], outputs["icr"]),
        }
        if router is not None:
            answers["icr_maps"] = (icr_maps, [query], [icr_alpha, icr_gamma])
        for key, (fn, inputs, outs) in answers.items():
            on(ask.click, fn, inputs, outs, f"answer_{key}")
            on(query.submit, fn, inputs, outs, False)
        on(ask_batch.click, answer_batch, [task_state, site_state, batch, shots, seed], batch_table, "answer_batch")
        on(build_btn.click, build, [task_state, site_steps, seed], [site_state, site_map, site_info, site_file],
           "build_site")
        on(site_upload.upload, upload_site, site_upload, [site_state, site_map, site_info], "load_site")
        on(flow_btn.click, flow, [task_state, n_prompts, shots, seed],
           [flow_curves, flow_arcs, flow_state, flow_layer_slider], "flow")
        on(flow_layer_slider.release, flow_layer, [flow_state, flow_layer_slider], flow_arcs, False)
        on(iso_btn.click, isolate, [task_state, iso_k, shots, seed], iso_plot, "isolation")
        on(anchor_btn.click, anchor_experiment, [anchor_kind, task_state, anchor_n, shots, seed], anchor_plot,
           "anchor_experiment")
        on(r1_btn.click, rank1, [task_state, r1_layer, shots, seed], [r1_err, r1_sv, r1_norm, r1_transfer], "rank1")
        on(run.click, run_eval, [task_state, chosen, n_test, shots, seed], [eval_table, eval_plot], "evaluate")
        for btn, kind in ((stop, "evaluate"), (build_stop, "site"), (flow_stop, "flow"), (r1_stop, "rank1")):
            btn.click(canceller(kind), None, None, queue=False, api_name=f"cancel_{kind}")
        demo.unload(end_session)
    return demo


def launch(model: LoadedModel | str = DEFAULT_MODEL, **kwargs) -> gr.Blocks:
    """Queue and serve: all model jobs share one concurrency group (the model is shared)."""
    demo = build_demo(model)
    demo.queue(default_concurrency_limit=int(os.environ.get("ICL_LAB_CONCURRENCY", "4")), max_size=64)
    demo.launch(max_file_size=MAX_BYTES, **kwargs)
    return demo
