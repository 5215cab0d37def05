"""Command line: `icl-lab eval ...` (or `python -m icr_app ...`), each method's own commands, the analyses, the app.

`eval` takes one group of flags per registered method (`--<method>-<field>`, from its config dataclass);
methods and analyses add their own subcommands; `app` serves the web page.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from functools import partial
from pathlib import Path

from icr_app import parallel
from icr_app.analyses import REGISTRY as ANALYSES
from icr_app.core.commandline import add_method_flags, add_task_args, method_config, model_from_args, tqdm_progress
from icr_app.core.loading import add_loading_args, loading_options
from icr_app.core.paths import resolve
from icr_app.core.prompts import SHOTS
from icr_app.core.tasks import TaskError, load_task
from icr_app.evaluation import EvalReport, evaluate_seeds
from icr_app.methods import REGISTRY, parse_entry
from icr_app.stats import significant

COMMANDS = ("icr_app.prebuilt:add_commands", "icr_app.suite_run:add_commands")  # commands of no method or analysis


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
        lines.append(f"{name:<16} {_fmt(r.accuracy, '>8.3f')} {_ci(r.ci95):>16} "
                     f"{_fmt(r.first_token_accuracy, '>9.3f')} {r.latency_s * 1000:>8.1f}ms {ratio:>11} "
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


def parse_seeds(args: argparse.Namespace) -> list[int]:
    return [int(s) for s in args.seeds.split(",") if s.strip()] if args.seeds else [args.seed]


def cmd_eval(args: argparse.Namespace) -> int:
    """Exit status 0 when every method served the task, 1 when one failed (its error is in the table). Under
    `accelerate launch` the processes share the test items (`parallel`); the first one prints and writes."""
    task = load_task(args.data, args.input_col, args.output_col, args.task_type)
    scoring = parallel.scoring()
    lm = model_from_args(args)
    names = [m.strip() for m in args.methods.split(",") if m.strip()]
    configs = {name: method_config(args, *parse_entry(name)) for name in names}
    report = evaluate_seeds(lm, task, names, parse_seeds(args), n_test=args.n_test, shots=args.shots,
                            batch_size=args.batch_size, configs=configs,
                            progress=partial(tqdm_progress, desc="batches"), **scoring)
    if parallel.is_main():
        if parallel.launched():
            print(f"test items split over {parallel.state().num_processes} processes", file=sys.stderr)
        data = report.to_json()
        print(format_table(report.runs[0]) if len(report.runs) == 1 else format_seeds_table(data))
        if args.json:
            Path(args.json).write_text(json.dumps(data, indent=2))
    return 1 if report.failed else 0


def cmd_app(args: argparse.Namespace) -> int:
    from icr_app.app import launch

    os.environ.update(loading_options(args).env())  # the app loads (and switches) models with these
    launch(args.model, server_name=args.host, server_port=args.port)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="icl-lab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("eval", help="score methods side by side on a held-out split")
    add_task_args(p)
    p.add_argument("--methods", default="zero-shot,few-shot", help=f"comma list of: {', '.join(REGISTRY)}; "
                   "'name@preset' runs a method from a preset (e.g. site@paper) beside its default")
    p.add_argument("--n-test", type=int, default=100, help="held-out queries scored (the rest trains)")
    p.add_argument("--shots", type=int, default=SHOTS,
                   help="demonstrations per few-shot prompt (few-shot, and the methods that show ICL prompts)")
    p.add_argument("--batch-size", type=int, default=16, help="queries per forward pass")
    p.add_argument("--seeds", default=None, help="comma list of seeds: one whole run per seed (split, "
                   "demonstrations, builds), reported as mean, sd over seeds and pooled interval; overrides --seed")
    p.add_argument("--json", default=None, help="write the numbers to this JSON file")
    for spec in REGISTRY.values():
        add_method_flags(p, spec)
    p.set_defaults(func=cmd_eval)
    registered = [*REGISTRY.values(), *ANALYSES.values()]
    for target in [spec.commands for spec in registered if spec.commands] + list(COMMANDS):
        resolve(target)(sub)
    p = sub.add_parser("app", help="serve the web app")
    p.add_argument("--model", default=None, help="the model to serve (default: $ICL_LAB_MODEL or smollm2-135m)")
    p.add_argument("--host", default=None, help="address to listen on (default: Gradio's, 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (default: Gradio's, 7860 or $GRADIO_SERVER_PORT)")
    add_loading_args(p)
    p.set_defaults(func=cmd_app)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (TaskError, ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    finally:
        parallel.finish()
