"""The package works installed, from any folder: built-in tasks, the shipped router and the app come with it."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # pip installs, a served app and the real model


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """`pip install --no-deps --target DIR .` from a copy of the checkout (so no build folder lands in it)."""
    src, target = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("site")
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    for name in files:
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target",
                    str(target), str(src)], check=True, capture_output=True, timeout=300)
    return target


def _run(installed: Path, elsewhere: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(installed)}
    return subprocess.run([sys.executable, "-m", "icr_app", *args], cwd=elsewhere, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_installed_package_carries_its_data(installed, tmp_path):
    assert (installed / "bin" / "icl-lab").is_file()
    for model in ("smollm2-135m", "gemma3-270m"):  # each built-in model's router
        assert sorted(p.name for p in (installed / "icr_app" / "assets" / "icr" / model).iterdir()) == [
            "MANIFEST.md", "router.safetensors"]
    assert len(list((installed / "icr_app" / "assets" / "tasks").glob("*.json"))) == 20
    probe = "import icr_app, icr_app.core.tasks as t; print(icr_app.__file__); print(t.builtin_task('spam').kind)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(installed)},
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(installed / "icr_app" / "__init__.py"), "classification"]


def test_installed_methods_come_from_the_distributions_entry_points(installed, tmp_path):
    """Away from the source tree the registry reads ICL Lab's own methods from the installed metadata, lists them
    in the order it does from the tree, and every method's words travel with it."""
    from icr_app.methods import REGISTRY

    probe = ("from icr_app.methods import REGISTRY, shipped_entry_points; from icr_app.app.strings import strings; "
             "print(','.join(p.name for p in shipped_entry_points())); print(','.join(REGISTRY)); "
             "print(all(f'method.{n}' in strings()['zh-CN'] for n in REGISTRY))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(installed)},
                         capture_output=True, text=True, check=True).stdout.split()
    assert sorted(out[0].split(",")) == sorted(REGISTRY) and out[1:] == [",".join(REGISTRY), "True"]


def test_the_library_installs_without_the_pages_packages(installed):
    """`pip install .` asks for no gradio, plotly, kaleido or spaces, nor bitsandbytes or lm-eval; `pip install
    ".[app]"` adds the page's four, `".[quant]"` the quantization backend and `".[harness]"` lm-evaluation-harness."""
    (dist,) = installed.glob("icl_lab-*.dist-info")
    needs = [line.removeprefix("Requires-Dist: ") for line in (dist / "METADATA").read_text().splitlines()
             if line.startswith("Requires-Dist: ")]
    extras = {"app": {"gradio", "plotly", "kaleido", "spaces"}, "quant": {"bitsandbytes"}, "harness": {"lm-eval"}}
    for need in needs:
        name = re.split(r"[<>=!~; \[]", need, maxsplit=1)[0].lower()
        for extra, names in extras.items():
            assert (name in names) == (f'extra == "{extra}"' in need), need
    assert "torch<3,>=2.13" in needs and "bitsandbytes<1,>=0.48; extra == \"quant\"" in needs
    assert len([n for n in needs if "extra == " in n]) == sum(map(len, extras.values()))


def test_installed_app_serves_from_another_folder(installed, tmp_path, tiny_checkpoint):
    from gradio_client import Client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(installed)}
    proc = subprocess.Popen([sys.executable, "-m", "icr_app", "app", "--model", tiny_checkpoint, "--host", "127.0.0.1",
                             "--port", str(port)], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        client = None
        for _ in range(240):
            if proc.poll() is not None:
                raise AssertionError(proc.stderr.read())
            try:
                client = Client(f"http://127.0.0.1:{port}/", verbose=False)
                break
            except Exception:
                time.sleep(0.5)
        assert client is not None, "the installed app did not come up"
        client.predict("sentiment", api_name="/load_builtin")
        md, _fig, prompt = client.predict("I loved it", 4, 0, ["zero-shot"], api_name="/answer_zero_shot")
        assert prompt == "Input: I loved it\nOutput:" and md.split("\n")[1].strip("*") in {"positive", "negative"}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_installed_eval_with_the_shipped_router(installed, tmp_path):
    """The real model and the router shipped inside the package, run from a folder that holds nothing of ICL Lab."""
    result = _run(installed, tmp_path, "eval", "--data", "sentiment", "--methods", "zero-shot,icr", "--n-test", "20",
                  "--json", str(tmp_path / "r.json"))
    assert result.returncode == 0, result.stderr
    import json

    methods = json.loads((tmp_path / "r.json").read_text())["methods"]
    assert methods["icr"]["error"] is None and methods["icr"]["n"] == 20
    assert methods["icr"]["correct"] != methods["zero-shot"]["correct"]  # the router changed some answers
