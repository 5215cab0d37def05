"""A method from another package: a small distribution of its own, installed into a temporary environment, declares
its SPEC in the `icl_lab.methods` entry-point group and appears in `eval` (its flags, its row), in `suite` and on the
page (its panel, its title in both languages from its own strings.yaml) with no edit to ICL Lab."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "icl-lab-suffix-plugin"
version = "0.1.0"

[project.entry-points."icl_lab.methods"]
suffix = "suffix_method:SPEC"

[tool.setuptools]
packages = ["suffix_method"]
package-data = {suffix_method = ["strings.yaml"]}
"""
MODULE = '''\
"""Zero-shot with a suffix on every query: a method in its own package."""

from dataclasses import dataclass, field

from icr_app.core.strings import folder_strings
from icr_app.methods.base import BuildContext, Method, MethodSpec


@dataclass(frozen=True)
class SuffixConfig:
    suffix: str = field(default=" !", metadata={"help": "appended to every query before it is asked"})


class SuffixMethod(Method):
    name = "suffix"

    def __init__(self, ctx: BuildContext, suffix: str) -> None:
        super().__init__(ctx.lm, ctx.answering)
        self.suffix = suffix

    def prompt(self, x: str) -> str:
        return self.template.zero_shot(x + self.suffix)


def build(ctx: BuildContext, config: SuffixConfig) -> SuffixMethod:
    return SuffixMethod(ctx, config.suffix)


SPEC = MethodSpec(name="suffix", title="Suffix", description="zero-shot with a suffix on the query",
                  config=SuffixConfig, build=build, kind="baseline", instant=True, strings=folder_strings(__file__))
'''
STRINGS = """\
en:
  method.suffix: Suffixed query
zh-CN:
  method.suffix: 加后缀的查询
"""
# What the page shows of it, read in the environment the plug-in is installed in
PAGE = """\
import json, sys
import gradio as gr
from icr_app.app import build_demo
from icr_app.app.strings import strings
from icr_app.core.models import load_model

demo = build_demo(load_model(sys.argv[1]))
side_by_side = [value for block in demo.blocks.values() if isinstance(block, gr.CheckboxGroup)
                for _, value in block.choices]
panels = [getattr(block.label, "key", block.label) for block in demo.blocks.values() if isinstance(block, gr.Plot)]
print(json.dumps({"choices": side_by_side, "panels": [str(p) for p in panels],
                  "en": strings()["en"]["method.suffix"], "zh": strings()["zh-CN"]["method.suffix"]}))
"""


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory) -> dict[str, str]:
    """The environment variables of a Python that has ICL Lab and the plug-in installed beside it (pip --target)."""
    source = tmp_path_factory.mktemp("plugin")
    (source / "suffix_method").mkdir()
    (source / "pyproject.toml").write_text(PYPROJECT)
    (source / "suffix_method" / "__init__.py").write_text(MODULE)
    (source / "suffix_method" / "strings.yaml").write_text(STRINGS)
    site = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                    "--target", str(site), str(source)], check=True, timeout=300)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}


def _run(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
def test_an_installed_plugin_method_gets_its_flags_and_is_evaluated(plugin_env, tiny_checkpoint):
    assert "--suffix-suffix" in _run(plugin_env, "-m", "icr_app", "eval", "--help")
    out = _run(plugin_env, "-m", "icr_app", "eval", "--model", tiny_checkpoint, "--data", "sentiment",
               "--methods", "zero-shot,suffix", "--n-test", "4", "--suffix-suffix", " ?")
    rows = [line for line in out.splitlines() if line.lstrip("| ").startswith("suffix")]
    assert rows and "error" not in rows[0].lower(), out
    assert "--suffix-suffix" in _run(plugin_env, "-m", "icr_app", "suite", "--help")


@pytest.mark.slow
def test_an_installed_plugin_method_is_on_the_page_in_both_languages(plugin_env, tiny_checkpoint):
    shown = json.loads(_run(plugin_env, "-c", textwrap.dedent(PAGE), tiny_checkpoint).splitlines()[-1])
    assert "suffix" in shown["choices"]
    assert any("suffix" in panel for panel in shown["panels"]), shown["panels"]
    assert (shown["en"], shown["zh"]) == ("Suffixed query", "加后缀的查询")


def test_without_the_plugin_it_is_not_there():
    """The control: the method comes from the installed distribution, not from anything in ICL Lab."""
    from icr_app.methods import REGISTRY, plugin_entry_points

    assert "suffix" not in REGISTRY and not [p for p in plugin_entry_points() if p.name == "suffix"]


def test_a_method_may_not_take_a_key_the_page_or_another_method_has(tmp_path):
    from dataclasses import replace

    from icr_app.app.strings import strings
    from icr_app.methods import REGISTRY, register

    register(replace(REGISTRY["zero-shot"], name="greedy-words", strings={"en": {"answer": "mine"}}))
    try:
        with pytest.raises(ValueError, match="method 'greedy-words'.*answer"):
            strings()
    finally:
        del REGISTRY["greedy-words"]
    assert strings()["en"]["answer"] == "Answer"


@pytest.mark.parametrize("text, says", [("en: [a, b]\n", "one mapping of key to text per language"),
                                        ("en:\n  method.x: ''\n", "no text for method.x"),
                                        ("en: {a: b\n", "cannot read")])
def test_a_folders_words_are_checked_when_read(tmp_path, text, says):
    from icr_app.core.strings import folder_strings

    (tmp_path / "strings.yaml").write_text(text)
    with pytest.raises(ValueError, match=says):
        folder_strings(tmp_path / "__init__.py")
