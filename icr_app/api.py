"""ICL Lab from Python: the methods on your own model, in your own code (README has an example).

    import icr_app as icl

    lm = icl.wrap(model, tokenizer)                  # your transformers model, left as it is
    site = icl.build("site", lm, [("great film", "positive"), ...], steps=10)
    site.predict(["a joy"])[0].label_probs           # predictions with the labels' probabilities
    site.save("site.safetensors"); icl.load("site.safetensors", lm)
    with site.applied():                             # your own model(...) / model.generate(...) calls, changed
        model.generate(**lm.encode(site.prompt("a joy")))   # ids on the model's device
    icl.evaluate(lm, "sentiment", ["zero-shot", "site"], seeds=[0, 1]).to_json()

Everything here is a thin layer over what the CLI and the app use (`methods.build_method`, `evaluate`, `suite`,
the registries), so a method built here answers exactly as it does in `icl-lab eval`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from transformers import PreTrainedModel, PreTrainedTokenizerBase

from icr_app import methods as _methods
from icr_app import parallel
from icr_app import suite_run as _suite
from icr_app.analyses import REGISTRY as ANALYSES
from icr_app.analyses import AnalysisSpec
from icr_app.core import models as _models
from icr_app.core.loading import LoadOptions
from icr_app.core.models import DEFAULT_MODEL, LoadedModel, builtin_checkpoint
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import SHOTS, PromptFormat
from icr_app.core.tasks import Task, load_task, make_task
from icr_app.evaluation import SeedsReport, evaluate_seeds
from icr_app.methods.base import Method, MethodSpec

Examples = Task | str | Path | Iterable[tuple[str, str]]
"""What a method learns from: (input, output) pairs, a task file (CSV, TSV, JSON, JSONL), a built-in task's name,
or a `Task`."""


def wrap(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, name: str | None = None) -> LoadedModel:
    """Your model and tokenizer, ready for ICL Lab. The model stays the same object and behaves as before: its
    parameters' `requires_grad`, its mode and its attention implementation are left as they are; ICL Lab's
    attention function and hooks are in force only inside ICL Lab's calls and `Method.applied` blocks. `name`
    (default: the checkpoint's) is stamped on every file a method saves, with a hash of the architecture. The
    tokenizer gets a pad token (its end-of-sequence token) when it has none, and left padding."""
    return _models.wrap(model, tokenizer, name)


def load_model(name: str = DEFAULT_MODEL, options: LoadOptions | None = None, **fields: Any) -> LoadedModel:
    """A model ICL Lab loads and owns (frozen, on ICL Lab's attention for good): a built-in name
    ("smollm2-135m", offline), a .gguf file (dequantised once and cached by its content hash, its tokenizer from
    the file), a local checkpoint folder, or a hub id; loaded as `options` say, with any of their fields given as
    keywords in their place (`LoadOptions`):

    - `dtype`: "auto" (float32 on the CPU, bfloat16 or float16 on a GPU), "float32", "bfloat16" or "float16";
    - `device_map`: "auto", "balanced", "sequential", "cpu", "cuda" or a JSON file mapping modules to devices;
      `max_memory`: "0=20GiB,cpu=60GiB"; `offload_folder`: where weights that fit nowhere else go;
    - `quantization`: "4bit" or "8bit", the linear layers through bitsandbytes;
    - `revision`, `trust_remote_code` (off unless asked), `local_files_only`: passed to `from_pretrained`;
    - `attn_implementation`: the kernel ICL Lab's attention function calls when no method reads or changes the
      attention, "sdpa" (default) or "eager".

    `ModelTooLargeError` before a byte is read when the model cannot fit where they put it. The environment is
    not read: `LoadOptions.from_env()` gives the options the ICL_LAB_* variables name."""
    return _models.load_model(name, options, **fields)


def checkpoint(name: str = DEFAULT_MODEL) -> Path:
    """A built-in model (or a .gguf file) as a checkpoint folder that `from_pretrained` reads, offline: made from
    its GGUF file once (dequantised to fp32, cached under `ICL_LAB_CACHE`)."""
    return builtin_checkpoint(name)


def examples_task(examples: Examples) -> Task:
    """The `Task` that `examples` describe (see `Examples`); `TaskError` when they cannot be one."""
    if isinstance(examples, Task):
        return examples
    if isinstance(examples, (str, Path)):
        return load_task(examples)
    return make_task("examples", list(examples))


def build(method: str, lm: LoadedModel, examples: Examples, *, seed: int = 0, shots: int = SHOTS,
          prompt_format: PromptFormat = "plain", progress: Progress = no_progress, **config: Any) -> Method:
    """Method `method` ("site", "task-vector", "site@paper": see `method_specs()`) learnt from `examples` on `lm`.

    `config` overrides fields of the method's config (`method_specs()[name].config`), e.g. `steps=10` for SITE;
    `prompt_format`: "plain" or "chat" (the model's chat template), which the method then answers in and its file
    records; `progress` wraps its loops (`tqdm` works). Raises `BuildError` when the method cannot serve the task."""
    task = examples_task(examples)
    return _methods.build_method(lm, task, method, dataclasses.replace(_methods.entry_config(method), **config),
                                 seed=seed, shots=shots, prompt_format=prompt_format, progress=progress)


def load(path: str | Path, lm: LoadedModel) -> Method:
    """The built method a file holds (`Method.save`), or a PEFT LoRA adapter folder, ready to answer on `lm`;
    refuses a file made for another model (`ArtefactModelError`) and an adapter ICL Lab cannot represent."""
    return _methods.load_method(path, lm)


def export(method: Method, to: str, path: str | Path) -> Path:
    """`method` as files a serving stack reads, at `path`: "peft", a PEFT adapter folder (a LoRA) that
    `peft.PeftModel.from_pretrained(model, path)` loads and `load` reads back; "llama-cpp", a llama.cpp control
    vector; "steered", lm-eval's steered-model file. `ExportError` saying why for a method that has no such form
    (docs/elsewhere.md)."""
    return _methods.export_method(method, to, path)


def evaluate(lm: LoadedModel, task: Examples, methods: Sequence[str], *, seeds: Sequence[int] = (0,),
             n_test: int = 100, shots: int = SHOTS, batch_size: int = 16, configs: dict[str, Any] | None = None,
             prompt_format: PromptFormat = "plain", progress: Progress = no_progress) -> SeedsReport:
    """Every method in `methods` (names or "name@preset") built on a train split of `task` and scored on the
    `n_test` held-out examples, once per seed (each its own split and builds), timed side by side: what
    `icl-lab eval` prints. `configs` maps an entry to its config object (default: the entry's); `prompt_format`:
    every method's prompts as plain text or through the model's chat template ("chat"). A method that
    cannot serve the task is reported with its error (`report.failed`); `report.to_json()` is the CLI's JSON.
    Under `accelerate launch` the processes share the test items and all get the whole report."""
    return evaluate_seeds(lm, examples_task(task), list(methods), list(seeds), n_test=n_test, shots=shots,
                          batch_size=batch_size, configs=configs, progress=progress, prompt_format=prompt_format,
                          **parallel.scoring())


def suite(lm: LoadedModel, tasks: Sequence[str | Path | Task], methods: Sequence[str], *, out: str | Path,
          seeds: Sequence[int] = (0,), n_test: int = 100, shots: int = SHOTS, batch_size: int = 16,
          configs: dict[str, Any] | None = None, prompt_format: PromptFormat = "plain",
          progress: Progress = no_progress) -> dict[str, dict[str, Any]]:
    """`evaluate` over tasks (built-in names, task files, folders of them, `Task`s) × seeds, resumable: each
    finished task × method × seed is kept under `out`, which a later call reads back instead of running it again.
    Writes `out`'s summaries (summary.md, CSVs, figures when plotly is installed) and returns {task: its
    evaluation JSON over the seeds}, what `icl-lab suite` writes to OUT/TASK.json."""
    return _suite.run_suite(lm, tasks, methods, out=Path(out), seeds=seeds, n_test=n_test, shots=shots,
                            batch_size=batch_size, configs=configs, progress=progress, prompt_format=prompt_format)


def register_method(spec: MethodSpec) -> None:
    """Add your own method to the registry, where `build`, `load`, `evaluate`, `suite`, the CLI and the app find
    it. `ValueError` for a name already taken, `TypeError` for a config that is not a dataclass with help text
    on every field (`field(default=..., metadata={"help": "..."})`, what the CLI's flags show)."""
    _methods.register(spec)


def method_specs() -> dict[str, MethodSpec]:
    """The registered methods by name: title, description, kind, config dataclass (its fields' help says what each
    does) and presets."""
    return dict(_methods.REGISTRY)


def analysis_specs() -> dict[str, AnalysisSpec]:
    """The registered analyses by name: title, description and the views it ships for the app."""
    return dict(ANALYSES)
