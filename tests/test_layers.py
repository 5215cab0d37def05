"""The import rules of pyproject.toml's import-linter contracts (layers point one way, every module of the package in
one; the library below the app never imports gradio; methods never import each other; no import circles), and
what they cannot see: methods and analyses hold no UI, in their source and when imported."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from importlinter.cli import EXIT_STATUS_SUCCESS, lint_imports

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "icr_app"


def test_the_import_contracts_hold(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    status = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    report = capsys.readouterr().out
    assert status == EXIT_STATUS_SUCCESS, report
    assert "4 kept, 0 broken" in report


def test_every_module_of_the_package_is_in_a_layer():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert "ignore_imports" not in str(config) and "allow_indirect_imports" not in str(config)
    # An import under TYPE_CHECKING is a dependency too: excusing it once hid core's prompts <-> tasks circle.
    assert not config.get("exclude_type_checking_imports", False)
    layers = next(c for c in config["contracts"] if c["type"] == "layers")
    named = {tail.strip() for layer in layers["layers"] for tail in layer.replace(":", "|").split("|")}
    children = {p.relative_to(PACKAGE).parts[0].removesuffix(".py") for p in PACKAGE.rglob("*.py")}
    assert children - {"__init__"} <= named, f"in no layer: {sorted(children - {'__init__'} - named)}"
    assert layers["containers"] == ["icr_app"] and layers["exhaustive"]


def test_prompts_is_a_leaf_of_core():
    """Tasks carry a Template and sample demonstrations, so prompts may import none of core's task modules, not
    even for an annotation (a demonstration is the `Labelled` protocol there)."""
    inside = {name for name in imported(PACKAGE / "core" / "prompts.py") if name.startswith("icr_app")}
    assert inside == {"icr_app.core.errors"}


def imported(path: Path) -> set[str]:
    """The modules a source file imports, at any depth of its code (a lazy import inside a function too)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_no_method_or_analysis_imports_gradio_or_the_app():
    for folder in ("methods", "analyses"):
        for path in (PACKAGE / folder).rglob("*.py"):
            ui = {name for name in imported(path) if name.split(".")[0] == "gradio" or name.startswith("icr_app.app")}
            assert not ui, f"{path.relative_to(ROOT)} imports {sorted(ui)}"


@pytest.mark.slow  # a fresh interpreter
def test_importing_the_methods_and_analyses_leaves_gradio_and_plotly_out():
    """Their views name their figure functions as text, imported only by the app (`MethodSpec.view`)."""
    code = ("import sys, icr_app.methods, icr_app.analyses; "
            "print(sorted(m for m in sys.modules if m.startswith(('gradio', 'plotly', 'icr_app.app'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_independence_contract_names_every_shipped_method():
    """The methods that must not import each other are the ones the registry ships: a method added to the entry
    points is under the contract, and the contract names no method that is gone."""
    from icr_app.methods import shipped_entry_points

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    independent = next(c for c in config["contracts"] if c["type"] == "independence")
    assert sorted(independent["modules"]) == sorted(p.value.split(":")[0] for p in shipped_entry_points())
