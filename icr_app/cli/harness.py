"""`harness`: lm-evaluation-harness tasks run with a built method applied (`icl.harness_lm`), or on the model as
it is (zero-shot, and few-shot with `--num-fewshot`: the harness's own path).

    icl-lab harness --artefact site.safetensors --tasks my_task --include-path tasks/ --output out/
    icl-lab harness --method task-vector --data sentiment --tasks my_task --include-path tasks/ --output out/

docs/elsewhere.md says where each method intervenes in a harness request.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from icr_app.api import build, load
from icr_app.cli.flags import add_model_args, add_task_args, comma_list, command, model_from_args, task_from_args
from icr_app.core.models import LoadedModel
from icr_app.harness import evaluate_tasks, harness_lm, lm_eval_module, plain_lm

EXAMPLES = ("icl-lab harness --artefact site.safetensors --tasks my_task --include-path tasks/ --output out/",
            "icl-lab harness --method task-vector --data sentiment --tasks my_task --include-path tasks/ --output out/")


def harness_model(args: argparse.Namespace, lm: LoadedModel) -> Any:
    """The built method of --artefact, or --method built from --data, applied; neither: the model as it is."""
    if args.artefact and args.method:
        raise ValueError("give --artefact (a built method's file) or --method (built from --data), not both")
    if args.artefact:
        return harness_lm(load(args.artefact, lm), batch_size=args.batch_size)
    if args.method and args.method != "zero-shot":
        if not args.data:
            raise ValueError(f"--method {args.method} is built from the examples of --data; give --data")
        return harness_lm(build(args.method, lm, task_from_args(args), seed=args.seed), batch_size=args.batch_size)
    return plain_lm(lm, batch_size=args.batch_size)


def cmd_harness(args: argparse.Namespace) -> int:
    lm_eval_module()  # says which extra installs lm-eval before the model loads
    results = evaluate_tasks(harness_model(args, model_from_args(args)), args.tasks, num_fewshot=args.num_fewshot,
                             limit=args.limit, include_path=args.include_path)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    samples = results.pop("samples")
    (out / "results.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    for task, rows in samples.items():
        with open(out / f"samples_{task}.jsonl", "w") as f:
            f.writelines(json.dumps(row, default=str) + "\n" for row in rows)
    print(lm_eval_module("lm_eval.utils").make_table(results))
    print(f"results and per-document answers: {out}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "harness", "run lm-evaluation-harness tasks with a built method applied (the [harness] extra)",
                *EXAMPLES)
    p.add_argument("--artefact", default=None, help="the built method's file (`icl-lab build --out`) or PEFT folder")
    p.add_argument("--method", default=None, help="or a method built here from --data (default config; e.g. "
                                                  "task-vector, site@paper); neither: the model as it is")
    group = add_task_args(p, required=False)  # what --method is built from
    group.add_argument("--seed", type=int, default=0, help="seed of the build (default: 0)")
    p.add_argument("--tasks", required=True, type=comma_list, help="harness task names, comma-separated")
    p.add_argument("--include-path", default=None, help="a folder of your own harness task YAML files")
    p.add_argument("--num-fewshot", type=int, default=None, help="demonstrations per prompt (default: the task's)")
    p.add_argument("--limit", type=int, default=None, help="the first N documents of each task (default: all)")
    p.add_argument("--batch-size", type=int, default=16, help="requests per forward pass (default: 16)")
    p.add_argument("--output", required=True, help="folder for results.json and samples_<task>.jsonl")
    add_model_args(p, "the model (the one the method was built on)")
    p.set_defaults(func=cmd_harness)
