"""ICL Lab from Python: the methods on your own model, in your own code (README, "Use it from Python").

    import icr_app as icl

    lm = icl.wrap(model, tokenizer)                  # your transformers model, left as it is
    site = icl.build("site", lm, [("great film", "positive"), ...], steps=10)
    site.predict(["a joy"])[0].label_probs           # predictions with the labels' probabilities
    site.save("site.safetensors"); icl.load("site.safetensors", lm)
    with site.applied():                             # your own model(...) / model.generate(...) calls, changed
        model.generate(**tokenizer(site.prompt("a joy"), return_tensors="pt"))

Everything here is a thin layer over what the CLI and the app use (`methods.build_method`, the registries),
so a method built here answers exactly as it does in `icl-lab eval`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from transformers import PreTrainedModel, PreTrainedTokenizerBase

from icr_app.analyses import REGISTRY as ANALYSES
from icr_app.analyses import AnalysisSpec
from icr_app.core.models import DEFAULT_MODEL, LoadedModel, builtin_checkpoint
from icr_app.core.models import load_model as _load_model
from icr_app.core.models import wrap as _wrap
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import SHOTS
from icr_app.core.tasks import Task, load_task, make_task
from icr_app.methods import REGISTRY as METHODS
from icr_app.methods import build_method, entry_config, load_method
from icr_app.methods.base import BuildError, Method, MethodSpec, Prediction

Examples = Task | str | Path | Iterable[tuple[str, str]]
"""What a method learns from: (input, output) pairs, a task file (CSV, TSV, JSON, JSONL), a built-in task's name,
or a `Task`."""


def wrap(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, name: str | None = None) -> LoadedModel:
    """Your model and tokenizer, ready for ICL Lab. The model stays the same object and behaves as before: its
    parameters' `requires_grad`, its mode and its attention implementation are left as they are; ICL Lab's
    attention function and hooks are in force only inside ICL Lab's calls and `Method.applied` blocks. `name`
    (default: the checkpoint's) is stamped on every file a method saves, with a hash of the architecture. The
    tokenizer gets a pad token (its end-of-sequence token) when it has none, and left padding."""
    return _wrap(name or model.config.name_or_path or model.config.model_type, model, tokenizer)


def load_model(name: str = DEFAULT_MODEL) -> LoadedModel:
    """A model ICL Lab loads and owns (frozen, on ICL Lab's attention for good): a built-in name
    ("smollm2-135m", offline), a local checkpoint folder, or a hub id."""
    return _load_model(name)


def checkpoint(name: str = DEFAULT_MODEL) -> Path:
    """A built-in model as a checkpoint folder that `from_pretrained` reads, offline: made from its package's GGUF
    file once (dequantised to fp32, cached under `ICL_LAB_CACHE`)."""
    return builtin_checkpoint(name)


def examples_task(examples: Examples) -> Task:
    """The `Task` that `examples` describe (see `Examples`)."""
    if isinstance(examples, Task):
        return examples
    if isinstance(examples, (str, Path)):
        return load_task(examples)
    return make_task("examples", [tuple(pair) for pair in examples])


def build(method: str, lm: LoadedModel, examples: Examples, *, seed: int = 0, shots: int = SHOTS,
          progress: Progress = no_progress, **config: Any) -> Method:
    """Method `method` ("site", "task-vector", "site@paper": see `methods()`) learnt from `examples` on `lm`.

    `config` overrides fields of the method's config (`methods()[name].config`), e.g. `steps=10` for SITE;
    `progress` wraps its loops (`tqdm` works). Raises `BuildError` when the method cannot serve the task."""
    task = examples_task(examples)
    return build_method(lm, task, method, dataclasses.replace(entry_config(method), **config), seed=seed,
                        shots=shots, progress=progress)


def load(path: str | Path, lm: LoadedModel) -> Method:
    """The built method a file holds (`Method.save`), ready to answer on `lm`; refuses a file made for another
    model (`ArtefactModelError`)."""
    return load_method(path, lm)


def methods() -> dict[str, MethodSpec]:
    """The registered methods by name: title, description, kind, config dataclass (its fields' help says what each
    does) and presets."""
    return dict(METHODS)


def analyses() -> dict[str, AnalysisSpec]:
    """The registered analyses by name: title, description, their CLI commands and app tab."""
    return dict(ANALYSES)


__all__ = ["BuildError", "Examples", "LoadedModel", "Method", "Prediction", "analyses", "build", "checkpoint",
           "examples_task", "load", "load_model", "methods", "wrap"]
