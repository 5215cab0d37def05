"""Command-line flags derived from a config dataclass, one per field, each with the field's help string.

A field's help lives in its metadata (`field(default=..., metadata={"help": "..."})`); `flag` there renames
its flag (SITE's `n_prompts` is `--site-prompts`). Only the flags a user gives override the config, so a
preset such as SITE's paper setting can be the starting point and single flags still change it.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from typing import Any, Literal


def help_text(f: dataclasses.Field) -> str:
    text = f.metadata.get("help")
    if not text:
        raise TypeError(f"config field '{f.name}' has no help text (field(..., metadata={{'help': ...}}))")
    return text


def flag_name(prefix: str, f: dataclasses.Field) -> str:
    name = f.metadata.get("flag", f.name).replace("_", "-")
    return f"--{prefix}-{name}" if prefix else f"--{name}"


def _parser_for(annotation: Any) -> tuple[typing.Callable[[str], Any] | None, list | None, bool]:
    """(type converter, choices, is_bool) for a field annotation."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):  # X | None
        inner = [a for a in args if a is not type(None)]
        return _parser_for(inner[0])
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


def add_config_flags(parser: argparse.ArgumentParser | argparse._ArgumentGroup, config: type, prefix: str) -> None:
    """One flag per field of `config`; every default is None, so `config_from_flags` sees what was given."""
    hints = typing.get_type_hints(config)
    for f in dataclasses.fields(config):
        convert, choices, is_bool = _parser_for(hints[f.name])
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        text = f"{help_text(f)} (default: {default})"
        if is_bool:  # `--flag`, `--flag true` and `--flag false` all work
            parser.add_argument(flag_name(prefix, f), dest=f"{prefix}:{f.name}", type=_truth, nargs="?", const=True,
                                default=None, metavar="{true,false}", help=text)
        else:
            parser.add_argument(flag_name(prefix, f), dest=f"{prefix}:{f.name}", type=convert, choices=choices,
                                default=None, help=text)


def config_from_flags(args: argparse.Namespace, config: type, prefix: str, base: Any = None) -> Any:
    """`base` (default: the config's defaults) with every flag the user gave applied."""
    given = {f.name: getattr(args, f"{prefix}:{f.name}") for f in dataclasses.fields(config)
             if getattr(args, f"{prefix}:{f.name}", None) is not None}
    return dataclasses.replace(base if base is not None else config(), **given)
