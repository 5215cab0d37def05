"""A clean tree: what building, installing, testing and running ICL Lab leave in the checkout is ignored by git."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LEFT_BEHIND = ["build/lib/icr_app/__init__.py", "dist/icl_lab-0.1.tar.gz", "icl_lab.egg-info/PKG-INFO",
               "icr_app/__pycache__/api.cpython-311.pyc", ".pytest_cache/README.md", ".ruff_cache/CACHEDIR.TAG",
               ".import_linter_cache/x.json", ".gradio/flagged/log.csv", "runs/suite/report.json", ".venv/bin/python"]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_build_outputs_caches_and_local_data_are_ignored():
    result = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT, input="\n".join(LEFT_BEHIND),
                            capture_output=True, text=True)
    assert sorted(result.stdout.split()) == sorted(LEFT_BEHIND)
