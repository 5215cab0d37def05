"""Ready for a Hugging Face Space: complete front matter, and model work inside @spaces.GPU where ZeroGPU is."""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

import gradio as gr

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


def test_front_matter_is_complete():
    meta = front_matter()
    for key in ("title", "emoji", "colorFrom", "colorTo", "sdk", "app_file", "license", "short_description"):
        assert meta.get(key), key
    assert meta["sdk"] == "gradio" and (ROOT / meta["app_file"]).is_file()
    assert len(meta["short_description"]) <= 60  # the Hub's limit
    assert "HuggingFaceTB/SmolLM2-135M-Instruct" in meta["models"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License") and meta["license"] == "mit"


def test_model_work_runs_inside_spaces_gpu_when_the_package_is_there(monkeypatch):
    wrapped: list[str] = []

    def gpu(fn):
        wrapped.append(fn.__name__)
        return fn

    monkeypatch.setitem(sys.modules, "spaces", types.SimpleNamespace(GPU=gpu))
    from icr_app.app import context

    try:
        importlib.reload(context)
        with gr.Blocks():
            button = gr.Button()
            context.on(button.click, lambda: None, None, None, "model_work", context.JOBS)
            context.on(button.click, lambda: None, None, None, "read_a_file", context.TASKS)
        assert wrapped == ["<lambda>"]  # the model's job, not the file read
    finally:
        monkeypatch.delitem(sys.modules, "spaces")
        importlib.reload(context)
    assert context.on_gpu(len) is len  # without the package, the wrapper is the function itself
