"""CLI subcommands of the anchors analyses: flow, isolate, reweight, compress, confusion."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from icr_app.analyses.anchors.compression import compression_experiment, fixed_demo_prompts
from icr_app.analyses.anchors.confusion import confusion_experiment
from icr_app.analyses.anchors.isolation import isolation_experiment, rows_to_json
from icr_app.analyses.anchors.reweighting import reweight_experiment
from icr_app.analyses.anchors.saliency import FLOWS, describe, information_flow, task_prompts
from icr_app.cli.flags import (
    add_analysis_args,
    add_prompt_format,
    command,
    model_from_args,
    task_from_args,
    tqdm_progress,
)
from icr_app.core.models import LoadedModel
from icr_app.core.prompts import Template
from icr_app.core.tasks import Task, TaskError


def _setup(args: argparse.Namespace) -> tuple[LoadedModel, Task, Template]:
    task = task_from_args(args)
    if task.kind != "classification":
        raise TaskError("task.classification_only", file=task.name)
    lm = model_from_args(args)
    return lm, task, Template().in_format(args.prompt_format, lm.tokenizer)


Experiment = Callable[[argparse.Namespace, LoadedModel, Task, Template], Any]


def _command(run: Experiment) -> Callable[[argparse.Namespace], int]:
    """The subcommand: load the task, the model and the prompt's template, run the experiment (it prints its
    table), write its JSON."""

    def command(args: argparse.Namespace) -> int:
        payload = run(args, *_setup(args))
        if args.json:
            Path(args.json).write_text(json.dumps(payload, indent=2))
        return 0

    return command


def flow(args: argparse.Namespace, lm: LoadedModel, task: Task, template: Template) -> Any:
    prompts = task_prompts(lm, task, args.n_prompts, args.shots, args.seed, template)
    res = information_flow(lm, task, prompts, partial(args.progress, desc="prompts"))
    norm = res.normalised()
    print(f"task={task.name} model={lm.name} prompts={res.n_prompts} mean tokens={res.mean_tokens:.0f} "
          f"{res.seconds_per_prompt:.1f}s/prompt")
    print(f"{'layer':>5} " + " ".join(f"{k:>6}" for k in FLOWS))
    for i in range(lm.n_layers):
        print(f"{i:>5} " + " ".join(f"{norm[k][i]:>6.3f}" for k in FLOWS))
    print(describe(res))
    return res.to_json()


def isolate(args: argparse.Namespace, lm: LoadedModel, task: Task, template: Template) -> Any:
    prompts = task_prompts(lm, task, args.n_test, args.shots, args.seed, template)
    rows = isolation_experiment(lm, prompts, task.labels, k=args.k, seed=args.seed, batch_size=args.batch_size,
                                progress=partial(args.progress, desc="conditions"))
    print(f"task={task.name} model={lm.name} n={len(prompts)} K={args.k}")
    print(f"{'isolated':<14} {'layers':<9} {'loyalty':>8} {'accuracy':>8}")
    for r in rows:
        print(f"{r.condition:<14} {r.layers:<9} {r.loyalty:>8.3f} {r.accuracy:>8.3f}")
    return {"task": task.name, "model": lm.name, "n": len(prompts), "k": args.k, "rows": rows_to_json(rows)}


def reweight(args: argparse.Namespace, lm: LoadedModel, task: Task, template: Template) -> Any:
    train, prompts = fixed_demo_prompts(lm, task, args.n_test, None, args.seed, template)
    res = reweight_experiment(lm, task, train, prompts, template, per_class=args.per_class, epochs=args.epochs,
                              lr=args.lr, seed=args.seed, batch_size=args.batch_size,
                              progress=partial(args.progress, desc="epochs"))
    print(f"task={task.name} model={lm.name} held-out={res.n_test} train={res.n_train} "
          f"accuracy before={res.accuracy_before:.3f} after={res.accuracy_after:.3f} mean|β|={res.beta_abs_mean:.3f}")
    return res.to_json()


def compress(args: argparse.Namespace, lm: LoadedModel, task: Task, template: Template) -> Any:
    _, prompts = fixed_demo_prompts(lm, task, args.n_test, args.shots, args.seed, template)
    res = compression_experiment(lm, task, prompts, args.batch_size, partial(args.progress, desc="batches"))
    print(f"task={task.name} model={lm.name} n={res.n} demonstration tokens={res.prefix_tokens}")
    print(f"{'variant':<14} {'cached':>6} {'accuracy':>8} {'loyalty':>8} {'seconds':>8} {'speed-up':>8}")
    for name, v in res.variants.items():
        print(f"{name:<14} {v.cached_tokens:>6} {v.accuracy:>8.3f} {v.loyalty:>8.3f} {v.seconds:>8.2f} "
              f"{v.speedup:>7.2f}x")
    return res.to_json()


def confusion(args: argparse.Namespace, lm: LoadedModel, task: Task, template: Template) -> Any:
    prompts = task_prompts(lm, task, args.n_test, args.shots, args.seed, template)
    res = confusion_experiment(lm, task.name, prompts, task.labels, args.layer, args.rank, args.batch_size,
                               partial(args.progress, desc="batches"))
    corr = "n/a (needs 3+ label pairs)" if res.correlation is None else f"{res.correlation:.3f}"
    print(f"task={task.name} model={lm.name} n={res.n} layer={res.layer} rank={res.rank} "
          f"accuracy={res.accuracy:.3f} correlation={corr}")
    tables: list[tuple[str, Sequence[Sequence[float]]]] = [
        ("predicted confusability", res.predicted), ("confusion (gold x predicted)", res.confusion)]
    for name, m in tables:
        print(name)
        for lab, row in zip(res.labels, m):
            print(f"  {lab:>12} " + " ".join(f"{x:>6.2f}" if isinstance(x, float) else f"{x:>6d}" for x in row))
    return res.to_json()


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the five subcommands on the main parser."""

    def add(name: str, help_: str, fn: Callable, n_flag: str, n_default: int,
            n_help: str = "held-out queries scored") -> argparse.ArgumentParser:
        p = command(sub, name, help_, f"icl-lab {name} --data sentiment {n_flag} {n_default} --json {name}.json")
        add_analysis_args(p)
        add_prompt_format(p)
        p.add_argument(n_flag, type=int, default=n_default, help=f"{n_help} (default: {n_default})")
        p.add_argument("--batch-size", type=int, default=8, help="prompts per forward pass (default: 8)")
        p.add_argument("--json", default=None, help="write the numbers to this JSON file")
        p.set_defaults(func=fn, progress=tqdm_progress)
        return p

    shots_help = "demonstrations per prompt (default: one per class)"
    p = add("flow", "saliency information flow S_wp, S_pq, S_ww per layer", _command(flow), "--n-prompts", 20,
            "few-shot prompts whose attention is read")
    p.add_argument("--shots", type=int, default=None, help=shots_help)
    p = add("isolate", "block label words from earlier tokens in the first/last K layers", _command(isolate),
            "--n-test", 100)
    p.add_argument("--shots", type=int, default=None, help=shots_help)
    p.add_argument("--k", type=int, default=5, help="number of layers isolated (default: 5)")
    p = add("reweight", "learn anchor re-weighting β on 4 examples per class", _command(reweight), "--n-test", 200)
    p.add_argument("--per-class", type=int, default=4, help="training examples per class (default: 4)")
    p.add_argument("--epochs", type=int, default=10, help="passes over them (default: 10)")
    p.add_argument("--lr", type=float, default=0.01, help="learning rate of β (default: 0.01)")
    p = add("compress", "answer queries against a KV cache kept at label words and formatting only",
            _command(compress), "--n-test", 100)
    p.add_argument("--shots", type=int, default=None, help=shots_help)
    p = add("confusion", "anchor distances vs the confusion matrix", _command(confusion), "--n-test", 100)
    p.add_argument("--shots", type=int, default=None, help=shots_help)
    p.add_argument("--layer", type=int, default=None, help="deep layer to read (default: the last)")
    p.add_argument("--rank", type=int, default=10, help="principal directions of the final queries (default: 10)")
