"""A clean tree: what building, installing, testing and running ICL Lab leave in the checkout is ignored by git, and
no tracked file (nor a shipped artefact's metadata) names what only the machine it was made on has."""

import json
import re
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


# What only the machine a file was made on has: its folders, the tools of the sessions that worked there, documents
# a reader cannot open. A user has a clone, $ICL_LAB_DATA (`icl-lab data fetch`), $PARITY_SRC and the papers.
# (each word's last letter in brackets, so that the pattern does not match itself: this file is checked too)
MACHINE = "|".join([r"/wor[k]/", r"/op[t]/", r"/roo[t]/", r"\.mirro[r]", "design car[d]", "this machin[e]",
                    "shared/dat[a]", "fetch too[l]", "`fetch` too[l]", "search too[l]"])
# CI's one path: it clones into a folder with a copy of shared/ beside it (.ci/run says so where it sets this)
CI_DATA = ".ci/run:export ICL_LAB_DATA="


def tracked(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_no_tracked_file_names_a_machine_path_or_a_private_tool():
    hits = tracked("grep", "-I", "-i", "-E", MACHINE).splitlines()
    assert [h for h in hits if not h.startswith(CI_DATA)] == []


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_no_shipped_safetensors_metadata_names_a_machine_path():
    paths = tracked("ls-files", "*.safetensors").split()
    assert paths, "no safetensors file is tracked"
    found = {}
    for path in paths:
        with open(ROOT / path, "rb") as f:
            header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
        found.update({f"{path}:{key}": re.findall(MACHINE, value, re.I)
                      for key, value in header.get("__metadata__", {}).items() if re.search(MACHINE, value, re.I)})
    assert found == {}
