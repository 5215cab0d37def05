"""docs/cli.md, written from the parser itself so the page cannot drift from the flags:
`python -m icr_app.cli.reference > docs/cli.md` (tests/test_cli.py fails when the page is not what this writes).

Each command's section has its description, its examples and its flags by group; the method flag groups, which
`eval`, `suite` and `build` share, are listed once, under "Method flags".
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from icr_app.cli import build_parser
from icr_app.methods import REGISTRY

INTRO = """\
# Command line reference

`icl-lab <command> [flags]`, or `python -m icr_app <command> [flags]` from a checkout. Every command prints its
own `--help`; this page is written from the same parser (`python -m icr_app.cli.reference > docs/cli.md`), so
the two cannot disagree. Progress bars go to stderr, tables to stdout; a command stopped with Ctrl-C says
`cancelled` and exits with status 130, one given bad input says why and exits with status 2.

- A method list entry is a method's name (`site`) or a method from one of its presets (`site@paper`); one run
  may hold both. Each method's config fields are flags `--<method>-<field>` (see [Method flags](#method-flags));
  they apply to every entry of that method, presets included.
- `--seeds 0,1,2` means the same in `eval` and `suite`: each seed is a whole run (its own train/test split,
  demonstrations and builds), reported as the mean, its sd over seeds and a pooled interval.
- The model's loading flags (`--dtype`, `--device-map`, `--max-memory`, `--offload-folder`, `--quantization`,
  `--revision`, `--trust-remote-code`, `--local-files-only`, `--attn-implementation`) fall back on the variable
  named after each (`ICL_LAB_DTYPE`, ..., `ICL_LAB_TRUST_REMOTE_CODE=1`) when not given.
"""


def _subcommands(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    """(command line, help, parser) of every leaf command, nested ones (`icr train`) included, in parser order."""
    for action in parser._subparsers._group_actions if parser._subparsers else []:
        assert isinstance(action, argparse._SubParsersAction)  # a subparsers group holds that one action
        helps = {choice.dest: choice.help for choice in action._choices_actions}
        for name, sub in action._name_parser_map.items():  # its `choices`, typed
            if sub._subparsers:
                yield from _subcommands(sub, f"{path} {name}")
            else:
                yield f"{path} {name}", helps[name] or "", sub


def _is_method_group(group: argparse._ArgumentGroup) -> bool:
    return any((group.title or "").startswith(f"{name}: ") for name in REGISTRY)


def _flag_lines(actions: list[argparse.Action]) -> list[str]:
    lines = []
    for action in actions:
        if not action.option_strings or isinstance(action, argparse._HelpAction):
            continue
        shown = ", ".join(f"`{s}`" for s in action.option_strings)
        if action.choices:
            shown += f" `{{{','.join(map(str, action.choices))}}}`"
        elif action.nargs != 0:
            shown += f" `{action.metavar or action.dest.upper()}`"
        needed = " (required)" if action.required else ""
        lines.append(f"- {shown}{needed}: {action.help}")
    return lines


def _groups(parser: argparse.ArgumentParser) -> list[argparse._ArgumentGroup]:
    return [g for g in parser._action_groups if any(a.option_strings and not isinstance(a, argparse._HelpAction)
                                                    for a in g._group_actions)]


LOADING = ("--dtype", "--device-map", "--max-memory", "--offload-folder", "--quantization", "--revision",
           "--trust-remote-code", "--local-files-only", "--attn-implementation")  # shown once, under "Model loading"


def _loading(action: argparse.Action) -> bool:
    return action.option_strings[0] in LOADING


def _group_lines(group: argparse._ArgumentGroup) -> list[str]:
    """A group's flags; the model group's loading flags as one line pointing at "Model loading"."""
    actions = [a for a in group._group_actions if a.option_strings and not _loading(a)]
    lines = _flag_lines(actions)
    if len(actions) < len([a for a in group._group_actions if a.option_strings]):
        lines.append("- " + ", ".join(f"`{flag}`" for flag in LOADING) + ": how it loads (see "
                     "[Model loading](#model-loading))")
    return lines


def _section(line: str, text: str, parser: argparse.ArgumentParser) -> list[str]:
    out = [f"## `{line}`", "", parser.description or text, ""]
    if parser.epilog:
        out += ["```sh", *(ex.strip() for ex in parser.epilog.splitlines()[1:]), "```", ""]
    methods = False
    for group in _groups(parser):
        if _is_method_group(group):
            methods = True
            continue
        title = group.title or "flags"
        title = "flags" if title in ("options", "optional arguments") else title
        out += [f"{title[0].upper()}{title[1:]}:", "", *_group_lines(group), ""]
    if methods:
        out += ["Method flags: `--<method>-<field>` for each method it takes (see [Method flags](#method-flags)).", ""]
    return out


def markdown() -> str:
    """The whole page."""
    parser = build_parser()
    lines = [INTRO, "Commands:", ""]
    commands = list(_subcommands(parser, "icl-lab"))
    lines += [f"- `{line}`: {text}" for line, text, _ in commands] + [""]
    for line, text, sub in commands:
        lines += _section(line, text, sub)
    eval_parser = next(sub for line, _, sub in commands if line == "icl-lab eval")
    lines += ["## Model loading", "", "Every command that loads a model takes these; one not given takes its "
              "`ICL_LAB_*` variable, else its default.", "",
              *_flag_lines([a for a in eval_parser._actions if a.option_strings and _loading(a)]), ""]
    lines += ["## Method flags", "", "One group per registered method, from the fields of its config dataclass; "
              "`eval` and `suite` take every group, `build` those of the methods that save a file.", ""]
    for group in filter(_is_method_group, _groups(eval_parser)):
        lines += [f"### {group.title}", "", *_flag_lines(group._group_actions), ""]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
