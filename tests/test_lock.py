"""The lock a new user installs: complete, within the declared ranges, what the tests run on, and what CI installs."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def _requirements(path: Path) -> list[Requirement]:
    """A requirements file's requirements, those of the files it includes (`-r FILE`) too."""
    out = []
    for line in (line.split("#")[0].strip() for line in path.read_text().splitlines()):
        if line.startswith("-r "):
            out += _requirements(path.parent / line.removeprefix("-r ").strip())
        elif line and not line.startswith("-"):
            out.append(Requirement(line))
    return out


@pytest.fixture(scope="module")
def lock() -> dict[str, str]:
    pins = {}
    for req in _requirements(ROOT / "requirements.lock"):
        (spec,) = req.specifier
        assert spec.operator == "==", f"{req} is not an exact pin"
        pins[canonicalize_name(req.name)] = spec.version
    return pins


def test_every_declared_range_is_pinned_inside_it(lock):
    declared = _requirements(ROOT / "requirements.txt") + _requirements(ROOT / "requirements-dev.txt")
    for req in declared:
        name = canonicalize_name(req.name)
        assert name in lock, f"{req.name} is declared but not locked"
        assert req.specifier.contains(lock[name], prereleases=True), f"lock pins {name}=={lock[name]}, not {req}"


def test_the_page_installs_the_library_and_its_own_packages():
    """requirements.txt (what a Space installs) is the library's requirements and the page's, which the library's
    leave out (`pip install .` has no gradio, plotly or kaleido)."""
    def names(file: str) -> set[str]:
        return {canonicalize_name(req.name) for req in _requirements(ROOT / file)}

    lib, app = names("requirements-lib.txt"), names("requirements-app.txt")
    assert {"torch", "transformers"} <= lib and {"gradio", "plotly", "kaleido"} <= app and not lib & app
    assert names("requirements.txt") == lib | app


def test_the_lock_is_closed_and_is_what_runs(lock):
    """Every locked package is installed at its pin, and every package it needs is locked too: a package that
    pip would have to pick by itself (unpinned) fails here, not on a new user's machine."""
    env = default_environment()
    for name, version in lock.items():
        assert metadata.version(name) == version, f"{name} {metadata.version(name)} installed, lock says {version}"
        for line in metadata.requires(name) or []:
            need = Requirement(line)
            if need.marker is not None and not need.marker.evaluate({**env, "extra": ""}):
                continue
            assert canonicalize_name(need.name) in lock, f"{name} needs {need.name}, which the lock does not pin"


def test_ci_runs_the_readme_test_command_in_a_new_environment():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", readme, re.S)
    assert block is not None
    app_cmd, test_cmd = block.group(1).strip().splitlines()
    assert app_cmd.endswith("icl-lab app") and test_cmd.endswith("python -m pytest -q")
    for cmd in (app_cmd, test_cmd):
        assert cmd.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install -r requirements.lock")
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_cmd in ci
    assert ci.index("rm -rf .venv") < ci.index(test_cmd)
