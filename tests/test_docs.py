"""The docs name only what exists, and their copies of the code stay in step with it.

README, BENCHMARKS and every page under docs/ may name repository files and folders (in backticks or as links),
`icr_app.*` modules and their attributes, `icl.*` API names and `icl-lab` commands; each must exist. A page
quotes a module's docstring only between `<!-- docstring PATH -->` and `<!-- /docstring -->`, and a method's
defaults table (between `<!-- config NAME -->` and `<!-- /config -->`) is its config's fields, defaults and help.
`PYTHONPATH=. python tests/test_docs.py` writes both again from the code.
"""

import argparse
import ast
import dataclasses
import importlib
import inspect
import os
import re
from pathlib import Path

import icr_app as icl
from icr_app.analyses import REGISTRY as ANALYSES
from icr_app.methods import REGISTRY as METHODS

ROOT = Path(__file__).resolve().parents[1]
# a method's and an analysis's page is the README.md of its folder
PAGES = sorted([ROOT / "README.md", ROOT / "BENCHMARKS.md", *(ROOT / "docs").rglob("*.md"),
                *(ROOT / "icr_app").rglob("README.md")])
QUOTE = re.compile(r"<!-- docstring (\S+) -->\n(.*?)<!-- /docstring -->\n", re.S)
CONFIG = re.compile(r"<!-- config (\S+) -->\n(.*?)<!-- /config -->\n", re.S)
INDEX = re.compile(r"<!-- (methods|analyses) -->\n(.*?)<!-- /\1 -->\n", re.S)
TOP_LEVEL = {p.name for p in ROOT.iterdir() if not p.name.startswith(".git")}


def _relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _quoted(path: str) -> str:
    """What a page holds between a docstring marker pair: the module's docstring, under a line naming it."""
    doc = ast.get_docstring(ast.parse((ROOT / path).read_text()))
    return f"From `{path}`:\n\n{(doc or '').strip()}\n"


def _spans(text: str) -> list[str]:
    """Inline code spans, fenced blocks left out (they hold commands and code, checked by their own tests)."""
    return re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))


def _repo_path(span: str) -> str | None:
    """The repository path a code span names, as a glob (placeholders such as <name> or MODEL as *), or None
    when the span is no path into the repository (a command, an output file, a path elsewhere)."""
    span = re.sub(r":.*$", "", span.strip()).rstrip("/")  # file.py:123, module.py:function, test.py::test
    if " " in span or span.startswith(("/", "~", "..", "http")):
        return None
    parts = span.split("/")
    if len(parts) == 1 and not re.fullmatch(r"[A-Z_]+\.md|\.ci|[\w-]+\.(toml|lock|txt)", span):
        return None
    if parts[0] not in TOP_LEVEL:
        return None
    return "/".join(re.sub(r"<[^>]+>|^[A-Z][A-Z_0-9]*$", "*", p) for p in parts)


def _link_targets(page: Path) -> list[str]:
    links = re.findall(r"\]\(([^)#\s]*[./][^)#\s]*)", page.read_text())  # a path: `](x)` in an equation is none
    return [os.path.relpath((page.parent / t).resolve(), ROOT) for t in links if not re.match(r"\w+:", t)]


def _exists(pattern: str) -> bool:
    if pattern.startswith(".."):
        return False  # a link out of the repository
    return any(ROOT.glob(pattern)) if "*" in pattern else (ROOT / pattern).exists()


def method_page(name: str) -> Path:
    """A method's page: the README.md in the folder of the module its build function lives in."""
    return Path(inspect.getfile(METHODS[name].build)).resolve().parent / "README.md"


def analysis_page(name: str) -> Path:
    return ROOT / "icr_app" / "analyses" / name / "README.md"


def test_every_method_and_analysis_has_its_page():
    pages = [method_page(name) for name in METHODS] + [analysis_page(name) for name in ANALYSES]
    missing = [_relative(p) for p in pages if not p.is_file()]
    assert not missing, missing


def _index(kind: str) -> str:
    """docs/methods.md's table of the registered methods (or analyses), each linking to its page."""
    if kind == "analyses":
        rows = [f"| [{name}](../{_relative(analysis_page(name))}) | {spec.title} | {spec.description} |"
                for name, spec in ANALYSES.items()]
        return "| analysis | title | what it shows |\n| --- | --- | --- |\n" + "\n".join(rows) + "\n"
    rows = [f"| [{name}](../{_relative(method_page(name))}) | {spec.title} | {spec.kind} | {spec.description} | "
            f"{', '.join(f'`{name}@{p}`' for p in spec.presets) or '—'} |" for name, spec in METHODS.items()]
    return ("| method | title | kind | what it does | presets |\n| --- | --- | --- | --- | --- |\n"
            + "\n".join(rows) + "\n")


def test_the_index_lists_every_registered_method_and_analysis():
    found = dict(INDEX.findall((ROOT / "docs" / "methods.md").read_text()))
    stale = [kind for kind in ("methods", "analyses") if found.get(kind) != _index(kind)]
    assert not stale, f"run `PYTHONPATH=. python tests/test_docs.py` to write them again: {stale}"


def test_docstrings_point_at_pages_that_exist():
    cited = {m for path in (ROOT / "icr_app").rglob("*.py") for m in re.findall(r"docs/[\w/-]+\.md", path.read_text())}
    assert cited, "no docstring points at docs/"
    assert not [c for c in cited if not (ROOT / c).is_file()]
    assert not [p for p in (ROOT / "icr_app").rglob("*.py") if "DESIGN.md" in p.read_text()]


def test_docs_cite_no_file_outside_the_repository():
    assert not [_relative(p) for p in PAGES if "DESIGN.md" in p.read_text()]  # the method designs live elsewhere


def test_docs_name_only_repository_files_that_exist():
    missing = set()
    for page in PAGES:
        named = [_repo_path(s) for s in _spans(page.read_text())] + _link_targets(page)
        missing |= {f"{_relative(page)}: {p}" for p in named if p and not _exists(p)}
    assert not missing, "\n".join(sorted(missing))


def _resolves(dotted: str) -> bool:
    """`icr_app.a.b:c` or `icr_app.a.b.c`: the longest importable module prefix, then attributes."""
    parts = dotted.replace(":", ".").split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def test_docs_name_only_modules_and_api_names_that_exist():
    stale = set()
    for page in PAGES:
        for span in _spans(page.read_text()):
            for dotted in re.findall(r"\bicr_app(?:[.:]\w+)+", span):
                if not _resolves(dotted):
                    stale.add(f"{_relative(page)}: {dotted}")
            stale |= {f"{_relative(page)}: icl.{name}" for name in re.findall(r"\bicl\.(\w+)", span)
                      if not hasattr(icl, name)}
    assert not stale, "\n".join(sorted(stale))


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices) if actions else {}


def test_docs_name_only_commands_that_exist():
    from icr_app.cli import build_parser

    top = _commands(build_parser())
    stale = set()
    for page in PAGES:
        for cmd, sub in re.findall(r"(?:icl-lab|-m icr_app) ([a-z][\w-]*)(?: ([a-z][\w-]*))?", page.read_text()):
            nested = _commands(top[cmd]) if cmd in top else {}
            if cmd not in top or (nested and sub not in nested):
                stale.add(f"{_relative(page)}: icl-lab {cmd} {sub if nested else ''}".strip())
    assert not stale, "\n".join(sorted(stale))


def test_quoted_docstrings_are_the_modules_own():
    stale = [f"{_relative(page)}: {path}" for page in PAGES for path, body in QUOTE.findall(page.read_text())
             if not (ROOT / path).is_file() or body != _quoted(path)]
    assert not stale, f"run `PYTHONPATH=. python tests/test_docs.py` to copy them again: {stale}"


def _config_table(name: str) -> str:
    """A method's defaults table, as its page holds it between `<!-- config NAME -->` and `<!-- /config -->`."""
    rows = ["| field | default | what it sets |", "| --- | --- | --- |"]
    for f in dataclasses.fields(METHODS[name].config):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        rows.append(f"| `{f.name}` | `{default!r}` | {f.metadata['help']} |")
    return "\n".join(rows) + "\n"


def test_defaults_tables_are_the_configs():
    tables = {name: CONFIG.findall(method_page(name).read_text()) for name in METHODS}
    stale = [name for name, found in tables.items() if found != [(name, _config_table(name))]]
    assert not stale, f"run `PYTHONPATH=. python tests/test_docs.py` to write them again: {stale}"


def copy_from_code() -> None:
    for page in PAGES:
        text = page.read_text()
        new = QUOTE.sub(lambda m: f"<!-- docstring {m[1]} -->\n{_quoted(m[1])}<!-- /docstring -->\n", text)
        new = CONFIG.sub(lambda m: f"<!-- config {m[1]} -->\n{_config_table(m[1])}<!-- /config -->\n", new)
        new = INDEX.sub(lambda m: f"<!-- {m[1]} -->\n{_index(m[1])}<!-- /{m[1]} -->\n", new)
        if new != text:
            page.write_text(new)
            print("copied from the code into", _relative(page))


if __name__ == "__main__":
    copy_from_code()
