"""The lock a new user installs: complete, within the declared ranges, what the tests run on, and what CI installs."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest
from helpers import requirements_in
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
# Pure-Python packages that lm-eval (the `harness` extra) needs and that the index has as source only (a few kB each):
# pip builds their wheel on any platform, so they are the lock's only pins without a wheel.
SOURCE_ONLY = ("rouge-score", "sqlitedict", "word2number")


@pytest.fixture(scope="module")
def lock() -> dict[str, str]:
    pins = {}
    for req in requirements_in(ROOT / "requirements.lock"):
        (spec,) = req.specifier
        assert spec.operator == "==", f"{req} is not an exact pin"
        pins[canonicalize_name(req.name)] = spec.version
    return pins


def test_every_pin_is_a_public_version(lock):
    """A local build (torch's `+cpu`) lives on its maker's own index only: a pip that reaches the public index alone
    would find no such version."""
    assert not [f"{name}=={v}" for name, v in lock.items() if Version(v).local is not None]


def test_the_lock_pins_no_cuda_package(lock):
    """The public Linux torch is the CUDA build, which asks for its nvidia-* packages itself; pinned here they would
    be installed on the CPU machines too (gigabytes), where pip takes the CPU build of the same version."""
    assert not [name for name in lock if name.startswith(("nvidia-", "cuda-")) or name == "triton"]


def test_every_declared_range_is_pinned_inside_it(lock):
    declared = requirements_in(ROOT / "requirements.txt") + requirements_in(ROOT / "requirements-dev.txt")
    for req in declared:
        if req.marker and not req.marker.evaluate({"python_version": "3.11", "python_full_version": "3.11.0"}):
            continue  # a package the lock's CPython 3.11 does not take (tomli, before tomllib)
        name = canonicalize_name(req.name)
        assert name in lock, f"{req.name} is declared but not locked"
        assert req.specifier.contains(lock[name], prereleases=True), f"lock pins {name}=={lock[name]}, not {req}"


def test_the_page_installs_the_library_and_its_own_packages():
    """requirements.txt (what a Space installs) is the library's requirements and the page's, which the library's
    leave out (`pip install .` has no gradio, plotly or kaleido)."""
    def names(file: str) -> set[str]:
        return {canonicalize_name(req.name) for req in requirements_in(ROOT / file)}

    lib, app = names("requirements-lib.txt"), names("requirements-app.txt")
    assert {"torch", "transformers"} <= lib and {"gradio", "plotly", "kaleido"} <= app and not lib & app
    assert names("requirements.txt") == lib | app


def test_the_lock_is_closed_and_is_what_runs(lock):
    """Every locked package is installed at its pin, and every package it needs is locked too: a package that
    pip would have to pick by itself (unpinned) fails here, not on a new user's machine."""
    env = default_environment()
    for name, version in lock.items():
        installed = Version(metadata.version(name))
        # A local build satisfies the public pin (PEP 440), and pip prefers it: a CPU machine's torch 2.13.0+cpu for
        # the lock's torch==2.13.0. So the public part of the installed version is what must equal the pin.
        assert Version(installed.public) == Version(version), f"{name} {installed} installed, lock says {version}"
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


def _public_pip(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    """pip as a new user's: `--isolated` drops the PIP_* variables (a machine's own find-links folder) and
    PIP_CONFIG_FILE=devnull every config file (its extra indexes), which leaves pip's default index alone."""
    return subprocess.run([sys.executable, "-m", "pip", "--isolated", *args], env={**os.environ,
                          "PIP_CONFIG_FILE": os.devnull}, capture_output=True, text=True, timeout=timeout)


def _resolve_lock(tmp_path: Path, *options: str) -> dict[str, dict]:
    """The packages (report items by name) that `pip install -r requirements.lock` would install from the public index.

    A dry run with fast-deps reads each wheel's metadata by HTTP range requests and downloads no wheel (the index
    pages here do not offer the metadata files apart): seconds and megabytes, not the CUDA build's gigabytes."""
    probe = _public_pip("index", "versions", "pip", timeout=120)
    if probe.returncode != 0:
        pytest.fail(f"the public package index cannot be reached, and this test needs it:\n{probe.stderr[-2000:]}")
    report = tmp_path / "report.json"
    start = time.monotonic()
    run = _public_pip("install", "--dry-run", "--ignore-installed", "--no-cache-dir", "--use-feature=fast-deps",
                      "--report", str(report), "-r", str(ROOT / "requirements.lock"), *options)
    took = time.monotonic() - start
    assert run.returncode == 0, f"the lock does not resolve on the public index:\n{run.stderr[-4000:]}"
    fetched = [line.strip() for line in run.stdout.splitlines() if line.strip().startswith("Downloading ")
               and not _is_source_only(line.split()[1])]
    assert not fetched and took < 300, f"a dry run of {took:.0f} s that downloaded whole wheels: {fetched[:5]}"
    return {canonicalize_name(item["metadata"]["name"]): item for item in json.loads(report.read_text())["install"]}


def _is_source_only(file: str) -> bool:
    """Whether `file` is the source archive of a SOURCE_ONLY package."""
    name, _, rest = file.rpartition("-")
    return canonicalize_name(name) in SOURCE_ONLY and rest.endswith((".tar.gz", ".zip"))


def _torchs_platform_needs(got: dict[str, dict], lock: dict[str, str]) -> set[str]:
    """What torch asks for on this platform only (a requirement with a marker: the CUDA build's packages on Linux),
    and what those ask for in turn (the extras they name too), that the lock does not pin."""
    env, found, todo = default_environment(), set(), [("torch", ("",))]
    while todo:
        name, extras = todo.pop()
        for need in map(Requirement, got[name]["metadata"].get("requires_dist", [])):
            if name == "torch" and need.marker is None:
                continue  # what torch needs everywhere is the lock's to pin
            dep = canonicalize_name(need.name)
            wanted = need.marker is None or any(need.marker.evaluate({**env, "extra": e}) for e in extras)
            if wanted and dep not in lock and (dep, *need.extras) not in found:
                found.add((dep, *need.extras))
                todo.append((dep, ("", *need.extras)))
    return {dep for dep, *_ in found}


@pytest.mark.slow
def test_the_lock_resolves_on_the_public_index_alone(lock, tmp_path):
    """README's install for a new user: every pin exists there, and pip adds only what torch itself asks for (on
    Linux x86-64 the public torch is the CUDA build: its nvidia-* packages, which the lock leaves to torch)."""
    got = _resolve_lock(tmp_path)
    assert {name: got[name]["metadata"]["version"] for name in lock if name in got} == lock
    extra = set(got) - set(lock)
    assert extra == _torchs_platform_needs(got, lock), f"unpinned, and not torch's own: {sorted(extra)}"
    if sys.platform == "linux" and platform.machine() == "x86_64":
        assert any(name.startswith("nvidia-") for name in extra), "the public Linux torch is no longer the CUDA build"


@pytest.mark.slow
def test_every_pin_has_a_macos_arm64_wheel_and_the_lock_is_closed_there(lock, tmp_path):
    """README's macOS line: each pin but SOURCE_ONLY's has a wheel for macOS 14 arm64 and CPython 3.11 (pip's
    --platform), and what they ask for on macOS is pinned. pip still evaluates requirement markers for the machine it
    runs on (torch's Linux-only CUDA packages would be asked for), so it resolves with --no-deps and the closure is
    checked here."""
    got = _resolve_lock(tmp_path, "--no-deps", "--only-binary=:all:", f"--no-binary={','.join(SOURCE_ONLY)}",
                        "--platform", "macosx_14_0_arm64", "--python-version", "3.11",
                        "--target", str(tmp_path / "target"))
    assert {name: item["metadata"]["version"] for name, item in got.items()} == lock
    mac = {**default_environment(), "sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64",
           "python_version": "3.11", "extra": ""}
    for name, item in got.items():
        for need in map(Requirement, item["metadata"].get("requires_dist", [])):
            if need.marker is None or need.marker.evaluate(mac):
                assert canonicalize_name(need.name) in lock, f"on macOS {name} needs {need}, which is not pinned"
