"""The command line: argparse lives in icr_app/cli/ only, eval and suite share their run flags, presets are asked
for one way, `build` goes through `build_method`, and docs/cli.md is the parser's own page."""

import argparse
import ast
import dataclasses
import re
import sys
from pathlib import Path

import pytest
import torch

import icr_app as icl
from icr_app.cli import CANCELLED, build, build_parser, main, reference
from icr_app.cli import prebuild as cli_prebuild
from icr_app.cli.flags import method_config
from icr_app.core.tasks import builtin_names
from icr_app.methods import entry_config
from icr_app.prebuilt import PREBUILT

PACKAGE = Path(icl.__file__).parent
PAGE = PACKAGE.parent / "docs" / "cli.md"
TINY = ["--task-vector-prompts", "2", "--task-vector-demos", "2", "--task-vector-val", "4"]


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_argparse_and_the_cli_are_imported_only_under_cli():
    outside = [p for p in PACKAGE.rglob("*.py") if "cli" not in p.relative_to(PACKAGE).parts[:1]]
    assert len(outside) > 50  # the walk sees the package
    argparse_users = [str(p.relative_to(PACKAGE)) for p in outside if "argparse" in _imports(p)]
    assert argparse_users == []
    cli_users = {str(p.relative_to(PACKAGE)) for p in outside
                 if any(n == "icr_app.cli" or n.startswith("icr_app.cli.") for n in _imports(p))}
    assert cli_users == {"__main__.py"}


def _commands(parser: argparse.ArgumentParser, path=()) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    out = {}
    for action in parser._subparsers._group_actions if parser._subparsers else []:
        for name, sub in action.choices.items():
            out |= _commands(sub, (*path, name)) if sub._subparsers else {(*path, name): sub}
    return out


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings if s not in ("-h", "--help")}


def test_eval_and_suite_share_the_run_flags_and_seeds_means_one_thing():
    commands = _commands(build_parser())
    evals, suites = _flags(commands["eval",]), _flags(commands["suite",])
    assert evals - suites == {"--data", "--input-col", "--output-col", "--task-type", "--json"}
    assert suites - evals == {"--tasks", "--out"}
    assert "--seed" not in evals | suites and "--seed" in _flags(commands["build",])
    parse = build_parser().parse_args
    assert parse(["eval", "--data", "x", "--seeds", "0, 2"]).seeds == [0, 2]
    assert parse(["suite", "--tasks", "x", "--out", "o", "--seeds", "0,2"]).seeds == [0, 2]
    assert parse(["eval", "--data", "x"]).seeds == parse(["suite", "--tasks", "x", "--out", "o"]).seeds == [0]


@pytest.mark.parametrize("argv", [["eval", "--data", "x", "--seeds", "0,one"], ["eval", "--data", "x", "--seed", "1"],
                                  ["eval", "--data", "x", "--site-paper"], ["suite", "--tasks", "x", "--out", "o",
                                                                            "--methods", ","]])
def test_a_bad_run_flag_is_a_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(argv)
    assert stop.value.code == 2 and "usage: icl-lab" in capsys.readouterr().err


def test_a_preset_is_asked_for_as_name_at_preset_and_the_flags_still_apply():
    args = build_parser().parse_args(["eval", "--data", "x", "--methods", "site,site@paper", "--site-steps", "9"])
    paper, plain = method_config(args, "site@paper"), method_config(args, "site")
    assert paper == dataclasses.replace(entry_config("site@paper"), steps=9)
    assert plain == dataclasses.replace(entry_config("site"), steps=9) and plain.n_prompts != paper.n_prompts


def test_build_saves_what_the_library_builds(tiny_checkpoint, tmp_path, capsys):
    out = tmp_path / "tv.safetensors"
    assert main(["build", "--method", "task-vector", "--data", "sentiment", "--out", str(out), "--seed", "3",
                 "--model", tiny_checkpoint, *TINY]) == 0
    assert f"-> {out}" in capsys.readouterr().out
    lm = icl.load_model(tiny_checkpoint)
    direct = icl.build("task-vector", lm, "sentiment", seed=3, n_prompts=2, n_demos=2, val_size=4)
    loaded = icl.load(out, lm)
    assert torch.equal(loaded.state.theta, direct.state.theta)
    other_seed = icl.build("task-vector", lm, "sentiment", seed=0, n_prompts=2, n_demos=2, val_size=4)
    assert not torch.equal(loaded.state.theta, other_seed.state.theta)  # --seed reached the build
    queries = ["a joy from start to finish", "dull and far too long"]
    assert [p.label_probs for p in loaded.predict(queries)] == [p.label_probs for p in direct.predict(queries)]


def test_build_refuses_a_method_that_keeps_nothing(capsys):
    assert main(["build", "--method", "few-shot", "--data", "sentiment", "--out", "x.safetensors"]) == 2
    err = capsys.readouterr().err
    assert "few-shot keeps no built state to save" in err and "task-vector" in err


def test_ctrl_c_cancels_a_build_cleanly(tiny_checkpoint, tmp_path, monkeypatch, capsys):
    def interrupted(it, **_):
        raise KeyboardInterrupt
        yield from it

    monkeypatch.setattr(build, "tqdm_progress", interrupted)
    out = tmp_path / "site.safetensors"
    assert main(["build", "--method", "site", "--data", "sentiment", "--out", str(out), "--model", tiny_checkpoint,
                 "--site-prompts", "2", "--site-demos", "2", "--site-steps", "2"]) == CANCELLED
    assert capsys.readouterr().err.strip().endswith("cancelled")
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_the_page_is_the_parsers_own():
    assert PAGE.read_text() == reference.markdown(), "regenerate: python -m icr_app.cli.reference > docs/cli.md"


def test_the_page_lists_every_flag_of_every_command_and_no_other():
    page = PAGE.read_text()
    listed = {flag for line in page.splitlines() if line.startswith("- `--")
              for flag in re.findall(r"`(--[a-z0-9-]+)", line.split(":")[0])}
    every = set().union(*map(_flags, _commands(build_parser()).values()))
    assert listed == every
    bare = {(cmd, a.option_strings[0]) for cmd, p in _commands(build_parser()).items() for a in p._actions
            if a.option_strings and not a.help}
    assert bare == set()  # every flag says what it does, in --help and on the page
    for command in _commands(build_parser()):
        assert f"## `icl-lab {' '.join(command)}`" in page


def _recipe(parser: argparse.ArgumentParser) -> type:
    """The config whose fields are a command's flags without a prefix (a recipe's: `icl-lab icr train --layers`):
    the one config dataclass of the package with exactly those fields."""
    names = {a.dest.split(":")[1] for a in parser._actions if a.dest.startswith(":")}
    found = {obj for module in list(sys.modules.values()) if module.__name__.startswith("icr_app.")
             for obj in vars(module).values() if isinstance(obj, type) and dataclasses.is_dataclass(obj)
             and {f.name for f in dataclasses.fields(obj)} == names}
    assert len(found) == 1, f"no single config has the fields {sorted(names)}: {found}"
    return found.pop()


def _real_default(parser: argparse.ArgumentParser, action: argparse.Action) -> object:
    """What a flag left out stands for: its config field's default for a config's flag (which parses to None, so
    that only the flags given override a preset; a method's flags carry its name, `--site-steps`), else argparse's."""
    if ":" not in action.dest:
        return action.default
    prefix, name = action.dest.split(":")
    return getattr(entry_config(prefix) if prefix else _recipe(parser)(), name)


def test_every_flag_shows_its_real_default_once():
    wrong = []
    for command, parser in _commands(build_parser()).items():
        for action in (a for a in parser._actions if a.option_strings and a.nargs != 0):
            default, text = _real_default(parser, action), action.help or ""
            shown = ",".join(map(str, default)) if isinstance(default, list | tuple) else str(default)
            if Path(shown).is_absolute():  # a folder of this install (the package's own): the help names it in words
                shown = ""
            if text.count("(default") > 1 or "default: None" in text or (
                    default is not None and f"default: {shown}" not in text):
                wrong.append(f"icl-lab {' '.join(command)} {action.option_strings[0]}: {text}")
    assert wrong == []


@pytest.mark.parametrize("command", [["eval", "--data", "sentiment"], ["suite", "--tasks", "sentiment", "--out", "o"]])
def test_an_unknown_preset_is_refused_before_the_model_loads(command, capsys):
    assert main([*command, "--methods", "zero-shot,site@nope", "--model", "no-such-model"]) == 2
    err = capsys.readouterr().err
    assert "site has no preset 'nope' (presets: site@paper, site@first-token)" in err and "no-such-model" not in err


def test_prebuild_refuses_a_method_it_does_not_ship_before_the_model_loads(capsys):
    assert main(["prebuild", "--methods", "site,icr", "--model", "no-such-model"]) == 2
    assert "not prebuildable: icr" in capsys.readouterr().err


def test_prebuild_passes_the_tasks_and_methods_asked_for(tiny_checkpoint, tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(cli_prebuild, "prebuild", lambda lm, tasks, **kw: calls.append((lm.name, tasks, kw)))
    assert main(["prebuild", "--model", tiny_checkpoint, "--tasks", "sentiment, antonyms", "--methods", "task-vector",
                 "--no-views", "--out", str(tmp_path)]) == 0
    assert main(["prebuild", "--model", tiny_checkpoint]) == 0
    (name, tasks, kw), (_, every, default) = calls
    assert name == tiny_checkpoint and tasks == ["sentiment", "antonyms"] and every == builtin_names()
    assert (kw["root"], kw["methods"], kw["views"]) == (tmp_path, ["task-vector"], False)
    assert (default["root"], default["methods"], default["views"]) == (PREBUILT, None, True)
