"""`eval` and `suite`: the run flags they share (one parent parser) and the tables `eval` prints.

`--seeds 0,1,2` means the same in both: each seed is a whole run (its split, demonstrations and builds).
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path

import icr_app as icl
from icr_app import parallel
from icr_app.cli.flags import (
    add_method_flags,
    add_model_args,
    add_prompt_format,
    add_task_args,
    comma_list,
    command,
    method_config,
    model_from_args,
    seed_list,
    task_from_args,
    tqdm_progress,
)
from icr_app.core.prompts import SHOTS
from icr_app.evaluation import EvalReport
from icr_app.methods import REGISTRY
from icr_app.stats import significant


def run_flags() -> argparse.ArgumentParser:
    """The flags `eval` and `suite` share: the model, the methods and their flag groups, the run's size."""
    p = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    add_model_args(p)
    group = p.add_argument_group("run")
    group.add_argument("--methods", type=comma_list, default="zero-shot,few-shot",
                       help=f"comma list of: {', '.join(REGISTRY)}; 'name@preset' runs a method from a preset "
                            "(e.g. site@paper) beside its default (default: zero-shot,few-shot)")
    group.add_argument("--seeds", type=seed_list, default="0",
                       help="comma list of seeds, each a whole run (split, demonstrations, builds); several are "
                            "reported as mean, sd over seeds and pooled interval (default: 0)")
    group.add_argument("--n-test", type=int, default=100,
                       help="held-out queries scored per task and seed; the rest trains (default: 100)")
    group.add_argument("--shots", type=int, default=SHOTS,
                       help="demonstrations per few-shot prompt (few-shot, and the methods that show ICL prompts) "
                            f"(default: {SHOTS})")
    group.add_argument("--batch-size", type=int, default=16, help="queries per forward pass (default: 16)")
    add_prompt_format(group)
    for spec in REGISTRY.values():
        add_method_flags(p, spec)
    return p


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def _ci(ci: list[float] | None) -> str:
    return "-" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def format_paired(paired: list[dict]) -> list[str]:
    """One line per paired comparison; "ns" marks a difference the exact McNemar test does not support."""
    if not paired:
        return []
    lines = ["", "paired (a - b on the same items, 95% interval, exact McNemar p; ns: not significant at 0.05)"]
    for c in paired:
        mark = "" if significant(c) else " ns"
        lines.append(f"{c['a'] + ' - ' + c['b']:<34} {c['diff']:>+7.3f} [{c['ci95'][0]:+.3f}, {c['ci95'][1]:+.3f}] "
                     f"p={c['p_mcnemar']:.3g}{mark}")
    return lines


def format_table(report: EvalReport) -> str:
    head = (f"{'method':<16} {'accuracy':>8} {'95% CI':>16} {'first-tok':>9} {'latency/q':>10} {'x zero-shot':>11} "
            f"{'prompt tok':>10} {'build s':>8}")
    lines = [f"task={report.task} model={report.model} kind={report.kind} n_test={report.n_test} seed={report.seed}",
             head, "-" * len(head)]
    for name, r in report.methods.items():
        if r.error is not None:
            lines.append(f"{name:<16} error: {r.error}")
            continue
        ratio = "-" if r.latency_ratio_to_zero_shot is None else f"{r.latency_ratio_to_zero_shot:.2f}x"
        ms = None if r.latency_s is None else r.latency_s * 1000
        lines.append(f"{name:<16} {_fmt(r.accuracy, '>8.3f')} {_ci(r.ci95):>16} "
                     f"{_fmt(r.first_token_accuracy, '>9.3f')} {_fmt(ms, '>8.1f')}ms {ratio:>11} "
                     f"{r.mean_prompt_tokens:>10.1f} {r.build_s:>8.1f}")
    return "\n".join(lines + format_paired(report.paired))


def format_seeds_table(data: dict) -> str:
    """A run over several seeds (`SeedsReport.to_json`): mean accuracy, its sd over seeds, the pooled interval."""
    head = (f"{'method':<16} {'accuracy':>8} {'sd':>6} {'95% CI (pooled)':>16} {'first-tok':>9} {'x zero-shot':>11} "
            f"{'build s':>8}")
    lines = [f"task={data['task']} model={data['model']} kind={data['kind']} n_test={data['n_test']} "
             f"seeds={','.join(map(str, data['seeds']))}", head, "-" * len(head)]
    for name, r in data["methods"].items():
        if r["error"] is not None:
            lines.append(f"{name:<16} error: {r['error']}")
            continue
        ratio = _fmt(r["latency_ratio_to_zero_shot"], ".2f") + "x"
        lines.append(f"{name:<16} {r['accuracy']:>8.3f} {r['accuracy_sd']:>6.3f} {_ci(r['ci95']):>16} "
                     f"{_fmt(r['first_token_accuracy'], '>9.3f')} {ratio:>11} {r['build_s']:>8.1f}")
    return "\n".join(lines + format_paired(data["paired"]))


def _configs(args: argparse.Namespace) -> dict[str, object]:
    """Each method entry's config: its defaults or preset's, with its method's flags the user gave."""
    return {entry: method_config(args, entry) for entry in args.methods}


def cmd_eval(args: argparse.Namespace) -> int:
    """Exit status 0 when every method served the task, 1 when one failed (its error is in the table). Under
    `accelerate launch` the processes share the test items (`parallel`); the first one prints and writes."""
    task, configs = task_from_args(args), _configs(args)  # bad input stops here, before the model loads
    report = icl.evaluate(model_from_args(args), task, args.methods, seeds=args.seeds, n_test=args.n_test,
                          shots=args.shots, batch_size=args.batch_size, configs=configs,
                          prompt_format=args.prompt_format, progress=partial(tqdm_progress, desc="batches"))
    if parallel.is_main():
        if parallel.launched():
            print(f"test items split over {parallel.state().num_processes} processes", file=sys.stderr)
        data = report.to_json()
        print(format_table(report.runs[0]) if len(report.runs) == 1 else format_seeds_table(data))
        if args.json:
            Path(args.json).write_text(json.dumps(data, indent=2))
    return 1 if report.failed else 0


def cmd_suite(args: argparse.Namespace) -> int:
    """Exit status as `eval`'s; the first process prints the summary (`accelerate launch` shares the units)."""
    configs = _configs(args)  # an unknown method or preset stops here, before the model loads
    reports = icl.suite(model_from_args(args), args.tasks, args.methods, out=args.out, seeds=args.seeds,
                        n_test=args.n_test, shots=args.shots, batch_size=args.batch_size, configs=configs,
                        prompt_format=args.prompt_format, progress=tqdm_progress)
    if reports:
        print((args.out / "summary.md").read_text())
    failed = any(m["error"] is not None for rep in reports.values() for m in rep["methods"].values())
    return 1 if failed else 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    shared = run_flags()
    p = command(sub, "eval", "score methods side by side on a held-out split of one task",
                "icl-lab eval --data sentiment --methods zero-shot,few-shot --n-test 20",
                "icl-lab eval --data my_task.csv --methods zero-shot,site,site@paper --seeds 0,1,2 --site-steps 40 "
                "--json site.json", parents=[shared])
    add_task_args(p)
    p.add_argument("--json", default=None, help="write the numbers to this JSON file")
    p.set_defaults(func=cmd_eval)
    p = command(sub, "suite", "methods × tasks × seeds, resumable, spread over processes with accelerate launch",
                "icl-lab suite --tasks antonyms,my_tasks/ --methods zero-shot,few-shot,site --seeds 0,1,2 "
                "--out runs/suite",
                "icl-lab suite --tasks icr-paper --methods zero-shot,few-shot,icr --seeds 0,1,2 --out runs/icr-paper",
                "accelerate launch --multi_gpu --num_processes 4 -m icr_app suite --tasks antonyms,my_tasks/ "
                "--out runs/suite", parents=[shared])
    p.add_argument("--tasks", type=comma_list, required=True,
                   help="comma list of built-in task names, task files, folders of them, dataset specs (hf:NAME) "
                        "and groups of specs (icr-paper, i2cl-paper; docs/tasks.md)")
    p.add_argument("--out", type=Path, required=True, help="output folder; finished units in it are not rerun")
    p.set_defaults(func=cmd_suite)
