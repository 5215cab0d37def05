"""Every figure the page draws, and the Evaluate tab's tables, in the visitor's language.

Each figure is drawn as the page draws it (the shipped views and methods of a built-in task where the package has
them, else a method built on the tiny model), once for a visitor reading Chinese and once for one reading English:
in Chinese its title and axes carry Chinese and none of its words (legend, colour bar, notes, hover text) is an
English phrase; in English it reads as before, with no Chinese.
"""

from __future__ import annotations

import json
import re
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest
from gradio.context import LocalContext
from helpers import TINY_FV, TINY_I2CL, TINY_LORA, hash_encoder

from icr_app.analyses.anchors.cached import EXPERIMENTS
from icr_app.app.evaluate_tab import agreement, item_table, report_from, results_table
from icr_app.app.figures import eval_bars, label_prob_bars
from icr_app.app.i18n import CHINESE, COOKIE, ENGLISH, method_title, say
from icr_app.app.strings import strings
from icr_app.app.tabs import anchors as anchors_panel
from icr_app.app.tabs import rank1 as rank1_panel
from icr_app.app.tabs import tour
from icr_app.core.tasks import builtin_task
from icr_app.methods import build_method
from icr_app.methods.function_vector.figures import aie_figure
from icr_app.methods.i2cl.figures import coefficient_figure
from icr_app.methods.icr.figures import routing_figures
from icr_app.methods.icr.pids import extract_pids
from icr_app.methods.icr.router import new_router
from icr_app.methods.icv.figures import sweep_figure
from icr_app.methods.icv.method import ICVState
from icr_app.methods.lora.figures import parameter_bars, training_curve
from icr_app.methods.site.figures import alpha_heatmap
from icr_app.methods.site.method import SiteState
from icr_app.methods.task_vector import TaskVectorState
from icr_app.methods.task_vector.figures import layer_figure

EN = strings()["en"]

PACKAGE = Path(__file__).parents[1] / "icr_app"
SHIPPED = PACKAGE / "assets" / "prebuilt" / "smollm2-135m" / "sentiment"
HAN = re.compile("[\u4e00-\u9fff]")
PHRASE = re.compile(r"[A-Za-z]{2,}[ ,:;]+[A-Za-z]{2,}")  # two English words in a row
MARKUP = re.compile(r"%\{[^}]*\}|<[^>]*>")  # Plotly's hover placeholders and the HTML in titles


@contextmanager
def visiting(lang: str):
    """Inside a request from a visitor who chose `lang` on the page's switch (what `say` reads)."""
    token = LocalContext.request.set(SimpleNamespace(headers={"cookie": f"{COOKIE}={lang}"}))
    try:
        yield
    finally:
        LocalContext.request.reset(token)


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list | tuple) else []


def visible_words(fig) -> tuple[str, list[str], list[str]]:
    """A figure's title, its axes' titles, and the rest of its words: the notes (subplot titles and line labels
    included), and each trace's legend name, colour bar title, hover template, hover text, and a bar's text and
    category names."""
    data = fig.to_dict()
    layout = data["layout"]
    title = layout.get("title", {}).get("text", "")
    axes = [v["title"]["text"] for k, v in layout.items()
            if k.startswith(("xaxis", "yaxis")) and v.get("title", {}).get("text")]
    rest = [note["text"] for note in layout.get("annotations", [])]
    for trace in data["data"]:
        rest += _strings(trace.get("name")) + _strings(trace.get("hovertemplate"))
        rest += _strings(trace.get("colorbar", {}).get("title", {}).get("text"))
        rest += _strings(trace.get("hovertext"))
        if trace["type"] == "bar":
            rest += _strings(trace.get("text")) + _strings(trace.get("x"))
    return title, axes, rest


@pytest.fixture(scope="module")
def shipped():
    """The views of the default model's sentiment task as the package ships them (drawn at request time)."""
    return json.loads((SHIPPED / "views.json").read_text())["views"]


@pytest.fixture(scope="module")
def built(lm):
    """The methods the package ships no build of, built on the tiny model; ICR's router untrained (α = 0)."""
    task = builtin_task("sentiment")
    methods = {name: build_method(lm, task, name, config).state
               for name, config in (("function-vector", TINY_FV), ("i2cl", TINY_I2CL), ("lora", TINY_LORA))}
    pids = extract_pids(lm, [task], rank=2, n_prompts=3, max_demos=2)
    methods["icr"] = new_router(lm, pids, 32, layers=[lm.n_layers - 1], encoder=hash_encoder)
    return methods


def drawings(shipped: dict, built: dict) -> dict:
    """Each figure the page draws, by name, as a function of no argument (drawn in the visitor's language)."""
    site = SiteState.load(SHIPPED / "site.safetensors")
    figures = {
        "anchors.flow": lambda: anchors_panel.figures(shipped, 15, None, 0.1, "re-weighting")[0],
        "anchors.arcs": lambda: anchors_panel.figures(shipped, 15, None, 0.1, "re-weighting")[1],
        "anchors.arcs_head": lambda: anchors_panel.figures(shipped, 15, 3, 0.1, "re-weighting")[1],
        "anchors.isolation": lambda: anchors_panel.figures(shipped, 15, None, 0.1, "re-weighting")[2],
        **{f"anchors.{kind}": (lambda kind=kind: anchors_panel.figures(shipped, 15, None, 0.1, kind)[3])
           for kind in EXPERIMENTS},
        **{f"rank1.{i}": (lambda i=i: rank1_panel.figures(shipped, 15)[i]) for i in range(4)},
        "answer.bars": lambda: label_prob_bars({"positive": 0.6, "negative": 0.4}, method_title("site"),
                                               say("bars.open"), say),
        "evaluate": lambda: eval_bars(report_from(shipped["evaluate"]), say),
        "site": lambda: alpha_heatmap(site, say),
        "task-vector": lambda: layer_figure(TaskVectorState.load(SHIPPED / "task-vector.safetensors"), say),
        "icv": lambda: sweep_figure(ICVState.load(SHIPPED / "icv.safetensors"), say),
        "function-vector": lambda: aie_figure(built["function-vector"], say),
        "i2cl": lambda: coefficient_figure(built["i2cl"], say),
        "lora.curve": lambda: training_curve(built["lora"], say),
        "lora.beside_site": lambda: parameter_bars(built["lora"].n_parameters, site.n_trained(), say),
        "lora.alone": lambda: parameter_bars(built["lora"].n_parameters, None, say),
        "icr.alpha": lambda: routing_figures(built["icr"], say, "wallet")[0],
        "icr.gamma": lambda: routing_figures(built["icr"], say, "wallet")[1],
        "tour.bars": lambda: tour._bars({say("tour.zero"): {"positive": 0.6, "negative": 0.4}},
                                        say("tour.versus", query="wallet")),
    }
    return figures


# The English title each figure had before it could be drawn in Chinese (its beginning).
ENGLISH_TITLES = {
    "anchors.flow": "Information flow, sentiment on", "anchors.arcs": "Anchor flow at layer 15, all heads",
    "anchors.arcs_head": "Anchor flow at layer 15, head 3", "anchors.isolation": "Attention isolation: label words",
    "anchors.re-weighting": "Anchor re-weighting", "anchors.compression": "Hidden-anchor compression, sentiment",
    "anchors.confusion": "Anchor confusion diagnosis, sentiment", "rank1.0": "Rank-1 identity, max abs error",
    "rank1.1": "Singular values of ΔW, layer 15", "rank1.2": "Size of the patch as demonstrations are added",
    "rank1.3": "Does the patch transfer?", "answer.bars": "SITE (task embedding)", "evaluate": "sentiment: accuracy on",
    "site": "SITE head selection for sentiment", "task-vector": "Task vector for sentiment",
    "icv": "ICV strength sweep for sentiment", "function-vector": "Function vector for sentiment",
    "i2cl": "I2CL coefficients for sentiment", "lora.curve": "LoRA on sentiment", "lora.beside_site":
    "trained parameters", "lora.alone": "trained parameters (build SITE to compare)", "icr.alpha": "α(x) for: wallet",
    "icr.gamma": "γ(x) for: wallet", "tour.bars": "“wallet”: zero-shot vs few-shot",
}


@pytest.fixture(scope="module")
def figures(shipped, built):
    return drawings(shipped, built)


def test_every_figure_is_checked(figures):
    assert set(figures) == set(ENGLISH_TITLES)


@pytest.mark.parametrize("name", sorted(ENGLISH_TITLES))
def test_a_figure_in_chinese(figures, name):
    with visiting(CHINESE):
        title, axes, rest = visible_words(figures[name]())
    assert HAN.search(title), title
    assert all(HAN.search(axis) for axis in axes), axes
    left = [text for text in [title, *axes, *rest] if PHRASE.search(MARKUP.sub(" ", text))]
    assert not left, left


@pytest.mark.parametrize("name", sorted(ENGLISH_TITLES))
def test_a_figure_in_english_reads_as_before(figures, name):
    with visiting(ENGLISH):
        title, axes, rest = visible_words(figures[name]())
    assert title.startswith(ENGLISH_TITLES[name]), title
    assert not any(HAN.search(text) for text in [title, *axes, *rest])


def test_the_figures_english_words_are_those_it_had():
    """A few exact English labels other tests and readers rely on."""
    with visiting(ENGLISH):
        assert say("fig.layer_head_value", value="α") == "layer %{y}, head %{x}<br>α = %{z:.3f}"
        assert say("fig.eval.hover") == ("%{x}: accuracy %{y:.3f} (95% interval %{customdata[0]:.3f}–"
                                         "%{customdata[1]:.3f})")


@pytest.mark.parametrize("name", ["sentiment", "emotion"])  # emotion: few-shot's gain is not significant
def test_the_evaluate_tables_follow_the_visitor(name):
    views = json.loads((SHIPPED.parent / name / "views.json").read_text())["views"]
    report, task = report_from(views["evaluate"]), builtin_task(name)
    with visiting(CHINESE):
        results, items = results_table(report), item_table(report, task)
        _, only = agreement(report, task, "zero-shot", "few-shot")
    assert all(HAN.search(column) for column in results.columns), list(results.columns)
    assert not any(", ns" in str(cell) for cell in results.iloc[:, 3])  # "不显著" instead
    assert list(items.columns[:2]) == ["输入", "标准答案"] and set(items.columns[2:]) <= set(report.methods)
    assert only.empty or list(only.columns) == ["输入", "标准答案", "答对的方法"]
    with visiting(ENGLISH):
        assert list(results_table(report).columns) == [
            "method", "accuracy", "95% interval", "− zero-shot (McNemar p)", "first-token accuracy",
            "latency ms/query", "× zero-shot time", "prompt tokens", "build s", "stored parameters",
            "trained parameters", "model"]
        assert list(item_table(report, task).columns[:2]) == ["input", "gold"]


def test_every_figure_string_is_used():
    """The figures' and the tables' strings are each asked for somewhere (none left behind by a change)."""
    code = "\n".join(path.read_text() for path in PACKAGE.rglob("*.py"))
    unused = [key for key in EN if key.startswith(("fig.", "evaluate.col.")) and f'"{key}"' not in code]
    assert not unused, unused
