"""The flags commands share: the model and how it loads, the task, the progress bar, and each method's flags
generated from its config dataclass.

A config field's help lives in its metadata (`field(default=..., metadata={"help": "..."})`); `flag` there
renames its flag (SITE's `n_prompts` is `--site-prompts`). Every generated flag defaults to None, so only the
flags a user gives override the config an entry starts from (its defaults, or its preset: `site@paper`).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import types
import typing
from collections.abc import Iterable
from typing import Any, Literal

from tqdm import tqdm

from icr_app.api import load_model
from icr_app.core.loading import DTYPES, KERNELS, QUANTIZATIONS, LoadOptions
from icr_app.core.models import DEFAULT_MODEL, LoadedModel
from icr_app.core.prompts import PROMPT_FORMATS
from icr_app.core.tasks import Task, load_task
from icr_app.methods import entry_config, parse_entry
from icr_app.methods.base import MethodSpec


def command(sub: argparse._SubParsersAction, name: str, text: str, *examples: str,
            **kw: Any) -> argparse.ArgumentParser:
    """Subcommand `name`: `text` is its one-line help and its description; `examples` (command lines) end its
    `--help` and its section of docs/cli.md. No flag may be abbreviated: `--seed` is not `--seeds`."""
    epilog = "examples:\n" + "\n".join(f"  {line}" for line in examples) if examples else None
    return sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".", epilog=epilog,
                          formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False, **kw)


def domains_command(sub: argparse._SubParsersAction, name: str, text: str, example: str, out_help: str,
                    model_help: str, config: type, recipe: str) -> argparse.ArgumentParser:
    """A command that learns once from several tasks (`--domains`) into a folder (`--out`), with its recipe's
    config as flags: ICR's router, ELICIT's library."""
    p = command(sub, name, text, example)
    p.add_argument("--domains", nargs="+", required=True,
                   help="task files, built-in names or dataset specs (hf:NAME), one domain each")
    p.add_argument("--out", required=True, help=out_help)
    add_model_args(p, model_help)
    add_config_flags(p.add_argument_group(recipe), config, "")
    return p


def tqdm_progress(it: Iterable, desc: str = "", leave: bool = False, **kw: Any) -> Iterable:
    """The CLI's progress bar (on stderr, so a command's table on stdout stays clean)."""
    return tqdm(it, desc=desc, leave=leave, file=sys.stderr, **kw)


def add_model_args(p: argparse.ArgumentParser, text: str = "built-in model name, .gguf file, local Hugging Face "
                   "checkpoint folder, or hub id", default: str | None = DEFAULT_MODEL) -> None:
    """The "model" group: `--model` and how it loads (`LoadOptions`' fields as flags; unset, they fall back on
    the ICL_LAB_* variables)."""
    group = p.add_argument_group("model")
    shown = f" (default: {default})" if default else ""
    group.add_argument("--model", default=default, help=text + shown)
    group.add_argument("--dtype", default=None, choices=DTYPES,
                       help="weights' dtype: auto is float32 on the CPU, bfloat16 on a GPU that supports it, else "
                            "float16 (default: $ICL_LAB_DTYPE or auto)")
    group.add_argument("--device-map", default=None,
                       help="auto|balanced|sequential (accelerate spreads the model over GPUs, CPU and disk), cpu, "
                            "cuda, or a JSON file mapping module names to devices or \"disk\" (default: "
                            "$ICL_LAB_DEVICE_MAP, else the one local device)")
    group.add_argument("--max-memory", default=None,
                       help="memory per device for the device map, e.g. 0=20GiB,1=20GiB,cpu=60GiB "
                            "(default: $ICL_LAB_MAX_MEMORY, else what is free)")
    group.add_argument("--offload-folder", default=None,
                       help="where weights that fit nowhere else are offloaded to disk "
                            "(default: $ICL_LAB_OFFLOAD_FOLDER)")
    group.add_argument("--quantization", default=None, choices=QUANTIZATIONS,
                       help="load the linear layers quantised by bitsandbytes, 4 or 8 bits an entry (some methods "
                            "refuse a quantised model: docs/your-own-model.md) (default: $ICL_LAB_QUANTIZATION, "
                            "else none)")
    group.add_argument("--revision", default=None,
                       help="a hub checkpoint's branch, tag or commit (default: $ICL_LAB_REVISION, else main)")
    group.add_argument("--trust-remote-code", action="store_true", default=None,
                       help="run the modelling code a hub checkpoint ships (default: $ICL_LAB_TRUST_REMOTE_CODE, "
                            "else off)")
    group.add_argument("--local-files-only", action="store_true", default=None,
                       help="never reach the hub: local folders and the hub's local cache only "
                            "(default: $ICL_LAB_LOCAL_FILES_ONLY, else off)")
    group.add_argument("--attn-implementation", default=None, choices=KERNELS,
                       help="the kernel ICL Lab's attention function calls where no method reads or changes the "
                            "attention: sdpa, or eager (the attention as matrices) "
                            "(default: $ICL_LAB_ATTN_IMPLEMENTATION, else sdpa)")


def loading_options(args: argparse.Namespace) -> LoadOptions:
    """The loading flags the user gave, over the ICL_LAB_* variables (the one place the CLI reads them)."""
    return LoadOptions.from_env().given(**{f.name: getattr(args, f.name) for f in dataclasses.fields(LoadOptions)})


def model_from_args(args: argparse.Namespace) -> LoadedModel:
    return load_model(args.model, loading_options(args))


def add_task_args(p: argparse.ArgumentParser, required: bool = True) -> argparse._ArgumentGroup:
    """The "task" group: `--data` (optional where `required` is False) and how its columns and kind are read."""
    group = p.add_argument_group("task")
    group.add_argument("--data", required=required, default=None,
                       help="task file (.csv/.tsv/.json/.jsonl), built-in task name or dataset spec (hf:NAME)")
    group.add_argument("--input-col", default=None, help="the input column (default: input, text, sentence, ...)")
    group.add_argument("--output-col", default=None, help="the output column (default: output, label, answer, ...)")
    group.add_argument("--task-type", default="auto", choices=["auto", "classification", "open"],
                       help="classification (scored over the label set) or open (generated); auto decides by the data")
    return group


def task_from_args(args: argparse.Namespace) -> Task:
    return load_task(args.data, args.input_col, args.output_col, args.task_type)


def add_prompt_format(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--prompt-format`: how every prompt of the command reaches the model, demonstrations and queries alike."""
    p.add_argument("--prompt-format", default="plain", choices=PROMPT_FORMATS,
                   help="plain: the template's text as it is; chat: each query a user turn of the model's own chat "
                        "template, each demonstration a user turn answered by an assistant turn (docs/scoring.md) "
                        "(default: plain)")


def add_analysis_args(p: argparse.ArgumentParser) -> None:
    """What every analysis command reads: the task, the model and the seed."""
    add_task_args(p)
    add_model_args(p)
    add_seed(p, "seed of the demonstrations and the queries drawn")


def add_seed(p: argparse.ArgumentParser, text: str) -> None:
    p.add_argument("--seed", type=int, default=0, help=f"{text} (default: 0)")


def _converter(annotation: Any) -> tuple[typing.Callable[[str], Any] | None, list | None, bool]:
    """(type converter, choices, is_bool) for a config field's annotation."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):  # X | None
        inner = [a for a in args if a is not type(None)]
        return _converter(inner[0])
    if origin is Literal:
        return type(args[0]), list(args), False
    if origin is list:
        item = args[0]
        return (lambda s: [item(x) for x in s.split(",") if x.strip()]), None, False
    if annotation is bool:
        return None, None, True
    return annotation, None, False


def _truth(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, not {text!r}")


def with_default(text: str, default: Any) -> str:
    """`text` ending with the default, once: a help that states its own ("default: the last third", what None
    means) is kept as written, and None alone tells a reader nothing, so it is not shown."""
    if default is None or "default:" in text:
        return text
    shown = ",".join(map(str, default)) if isinstance(default, list | tuple) else default  # as a list flag is typed
    return f"{text} (default: {shown})"


def show_defaults(parser: argparse.ArgumentParser) -> None:
    """Every flag of `parser` and its subcommands shows its argparse default in its help (`with_default`), so
    `--help` and docs/cli.md cannot leave one out; a switch (`store_true`) has none to show."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                show_defaults(sub)
        elif action.option_strings and action.nargs != 0 and action.help:
            action.help = with_default(action.help, action.default)


def _flag(prefix: str, f: dataclasses.Field) -> str:
    name = f.metadata.get("flag", f.name).replace("_", "-")
    return f"--{prefix}-{name}" if prefix else f"--{name}"


def _dest(prefix: str, f: dataclasses.Field) -> str:
    return f"{prefix}:{f.name}"


def add_config_flags(parser: argparse.ArgumentParser | argparse._ArgumentGroup, config: type, prefix: str) -> None:
    """One flag per field of `config` (`--<prefix>-<field>`, or `--<field>` with no prefix), its help the field's."""
    hints = typing.get_type_hints(config)
    for f in dataclasses.fields(config):
        text = f.metadata.get("help")
        if not text:
            raise TypeError(f"config field '{f.name}' has no help text (field(..., metadata={{'help': ...}}))")
        convert, choices, is_bool = _converter(hints[f.name])
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        text = with_default(text, default)
        if is_bool:  # `--flag`, `--flag true` and `--flag false` all work
            parser.add_argument(_flag(prefix, f), dest=_dest(prefix, f), type=_truth, nargs="?", const=True,
                                default=None, metavar="{true,false}", help=text)
        else:
            metavar = None if choices else f.metadata.get("flag", f.name).upper()
            parser.add_argument(_flag(prefix, f), dest=_dest(prefix, f), type=convert or str, choices=choices,
                                default=None, metavar=metavar, help=text)


def config_from_flags(args: argparse.Namespace, config: type, prefix: str, base: Any = None) -> Any:
    """`base` (default: the config's defaults) with every flag the user gave applied."""
    given = {f.name: getattr(args, _dest(prefix, f)) for f in dataclasses.fields(config)
             if getattr(args, _dest(prefix, f), None) is not None}
    return dataclasses.replace(base if base is not None else config(), **given)


def add_method_flags(p: argparse.ArgumentParser, spec: MethodSpec) -> None:
    """The method's flag group: `--<method>-<field>` for each field of its config dataclass."""
    presets = "".join(f"; {spec.name}@{name}: {text}" for name, (text, _) in spec.presets.items())
    add_config_flags(p.add_argument_group(f"{spec.name}: {spec.description}{presets}"), spec.config, spec.name)


def method_config(args: argparse.Namespace, entry: str) -> Any:
    """The config of method list entry `entry` ("site", "site@paper"): its defaults or its preset's, with the
    method's flags the user gave applied."""
    spec, _ = parse_entry(entry)
    return config_from_flags(args, spec.config, spec.name, entry_config(entry))


def comma_list(text: str) -> list[str]:
    """A flag's comma list of names ("zero-shot,site@paper", "sentiment,my_tasks/")."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"expected a comma list of names, not {text!r}")
    return names


def seed_list(text: str) -> list[int]:
    """`--seeds`: a comma list of seeds, each a whole run."""
    try:
        seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"--seeds wants a comma list of whole numbers (e.g. 0,1,2), not {text!r}") \
            from err
    if not seeds:
        raise argparse.ArgumentTypeError("--seeds names no seed")
    return seeds
