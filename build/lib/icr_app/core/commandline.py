"""What every subcommand shares, the CLI's and the methods' and analyses' own: the task arguments, the progress
bar, and a method's flags from its registry entry (its config dataclass and presets)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from icr_app.core.config import add_config_flags, config_from_flags
from icr_app.core.loading import add_loading_args, loading_options
from icr_app.core.models import DEFAULT_MODEL, LoadedModel, load_model

if TYPE_CHECKING:  # annotations only: core never imports the methods
    from icr_app.methods.base import MethodSpec


def tqdm_progress(it: Iterable, desc: str = "", leave: bool = False, **kw: Any) -> Iterable:
    return tqdm(it, desc=desc, leave=leave, file=sys.stderr, **kw)


def add_model_args(p: argparse.ArgumentParser,
                   text: str = "built-in model name, local Hugging Face checkpoint folder, or hub id") -> None:
    """`--model` and the loading flags (`--dtype`, `--device-map`, `--max-memory`, `--offload-folder`)."""
    p.add_argument("--model", default=DEFAULT_MODEL, help=text)
    add_loading_args(p)


def model_from_args(args: argparse.Namespace) -> LoadedModel:
    return load_model(args.model, **asdict(loading_options(args)))


def add_task_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, help="task file (.csv/.tsv/.json/.jsonl) or built-in task name")
    add_model_args(p)
    p.add_argument("--input-col", default=None, help="the input column (default: input, text, sentence, ...)")
    p.add_argument("--output-col", default=None, help="the output column (default: output, label, answer, ...)")
    p.add_argument("--task-type", default="auto", choices=["auto", "classification", "open"],
                   help="classification (scored over the label set) or open (generated); auto decides by the data")
    p.add_argument("--seed", type=int, default=0, help="seed of the train/test split and of every method")


def add_method_flags(p: argparse.ArgumentParser, spec: MethodSpec) -> None:
    """`--<method>-<field>` for each config field, and `--<method>-<preset>` for each preset."""
    group = p.add_argument_group(f"{spec.name}: {spec.description}")
    add_config_flags(group, spec.config, spec.name)
    for preset, (text, _) in spec.presets.items():
        group.add_argument(f"--{spec.name}-{preset}", dest=f"{spec.name}::{preset}", action="store_true",
                           help=f"start from {text}; the other --{spec.name}-* flags still apply")


def method_config(args: argparse.Namespace, spec: MethodSpec, preset: str | None = None) -> Any:
    """The method's config: its defaults (or `preset`, or a preset chosen by flag) with the flags the user gave."""
    chosen = [make for name, (_, make) in spec.presets.items()
              if name == preset or getattr(args, f"{spec.name}::{name}", False)]
    return config_from_flags(args, spec.config, spec.name, chosen[0]() if chosen else None)
