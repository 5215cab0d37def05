"""The import rules of pyproject.toml's import-linter contracts: layers point one way (core <- methods, analyses
<- cli, app), a tab reaches the app through its kit only, methods never import each other, no import circles."""

from pathlib import Path

from importlinter.cli import EXIT_STATUS_SUCCESS, lint_imports

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_contracts_hold(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    status = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    report = capsys.readouterr().out
    assert status == EXIT_STATUS_SUCCESS, report
    assert "4 kept, 0 broken" in report
