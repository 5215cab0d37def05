"""docs/architecture.md's "adding a method", as a test: a method is its own module plus one `register_method` call,
and the `eval` flags, the app's method list, its Evaluate tab and the benchmarks pick it up from the registry alone."""

import importlib.util
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import gradio as gr
import pytest
from gradio.i18n import I18nData

import icr_app as icl
from icr_app.app import build_demo
from icr_app.app.strings import strings
from icr_app.cli import build_parser
from icr_app.core.tasks import builtin_task
from icr_app.evaluation import evaluate
from icr_app.methods import REGISTRY
from icr_app.methods.base import BuildContext, Method, MethodSpec


@dataclass(frozen=True)
class EchoConfig:
    suffix: str = field(default=" !", metadata={"help": "appended to every query before it is asked"})


class Echo(Method):
    """Zero-shot with a suffix on the query: a method in a dozen lines."""

    name = "echo"

    def __init__(self, ctx: BuildContext, suffix: str) -> None:
        super().__init__(ctx.lm, ctx.answering)
        self.suffix = suffix

    def prompt(self, x: str) -> str:
        return self.template.zero_shot(x + self.suffix)


def build(ctx: BuildContext, config: EchoConfig) -> Echo:
    return Echo(ctx, config.suffix)


SPEC = MethodSpec(name="echo", title="Echo (test)", description="zero-shot with a suffix on the query",
                  config=EchoConfig, build=build, kind="baseline", instant=True)


@pytest.fixture
def registered():
    icl.register_method(SPEC)  # what a contributor (or a user with a method of their own) does
    yield
    del REGISTRY[SPEC.name]


def test_a_registered_method_gets_its_eval_flags(registered, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["eval", "--help"])
    text = capsys.readouterr().out
    assert "--echo-suffix" in text and "echo: zero-shot with a suffix on the query" in text
    args = build_parser().parse_args(["eval", "--data", "sentiment", "--methods", "echo", "--echo-suffix", " ?"])
    assert args.methods == ["echo"]


def test_a_registered_method_is_evaluated(registered, lm):
    report = evaluate(lm, builtin_task("sentiment"), ["zero-shot", "echo"], n_test=8)
    assert report.methods["echo"].error is None and report.methods["echo"].n == 8


def test_a_registered_method_is_in_the_apps_lists_and_evaluate_tab(registered, lm):
    demo = build_demo(lm)
    groups = {english(block.label): [(english(shown), value) for shown, value in block.choices]
              for block in demo.blocks.values() if isinstance(block, gr.CheckboxGroup)}
    assert ("Echo (test)", "echo") in groups["methods side by side"]  # no strings of its own: the registry's title
    assert ("echo", "echo") in groups["methods"]  # the Evaluate tab's
    panels = [block for block in demo.blocks.values() if isinstance(block, gr.Plot)]
    assert any(english(block.label) == "echo label probabilities" for block in panels)


def english(label: object) -> object:
    """A page string as an English visitor reads it (a translation key resolved, a plain string as it is)."""
    if isinstance(label, I18nData):
        return strings()["en"][label.key]
    if isinstance(label, str):  # a string joined with a translated one carries its key inline
        return re.sub(r"__i18n__(\{.*?\})", lambda m: strings()["en"][json.loads(m.group(1))["key"]], label)
    return label


def test_the_benchmarks_read_the_registry(registered):
    path = Path(__file__).resolve().parents[1] / "bench" / "methods_table.py"
    spec = importlib.util.spec_from_file_location("methods_table_fresh", path)
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    assert table.METHODS.split(",") == list(REGISTRY)
    assert "echo" in table.METHODS.split(",")
