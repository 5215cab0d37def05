"""Test modules share code through the helper modules (helpers.py, tiny.py, families.py, ...), never by importing
one another: a test module imported elsewhere runs its module-level code twice and ties two files' fixtures."""

import ast
from pathlib import Path

TESTS = Path(__file__).parent


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, at the top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_test_module_imports_another():
    test_modules = {p.stem for p in TESTS.glob("test_*.py")}
    found = {p.name: sorted(imported_modules(p) & test_modules) for p in sorted(TESTS.glob("*.py"))}
    assert {name: mods for name, mods in found.items() if mods} == {}
