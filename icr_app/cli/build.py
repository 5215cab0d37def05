"""`build`: learn one method from all of a task's examples and save what it learnt to one file.

    icl-lab build --method site --data sentiment --out site.safetensors --site-steps 40
    icl-lab build --method site@paper --data my_task.csv --out paper.safetensors

Every method that keeps a built state builds here, through `methods.build_method` (as the app's Build button,
`eval` and the library do); `icl.load(path, lm)` or the app reads the file back.
"""

from __future__ import annotations

import argparse
from functools import partial

from icr_app.cli.flags import (
    add_method_flags,
    add_model_args,
    add_prompt_format,
    add_seed,
    add_task_args,
    command,
    method_config,
    model_from_args,
    task_from_args,
    tqdm_progress,
)
from icr_app.core.prompts import SHOTS
from icr_app.methods import REGISTRY, build_method, parse_entry


def savable() -> list[str]:
    """The registered methods whose build leaves a file to save."""
    return [name for name, spec in REGISTRY.items() if spec.artefact is not None]


def cmd_build(args: argparse.Namespace) -> int:
    spec, _ = parse_entry(args.method)
    if spec.artefact is None:
        raise ValueError(f"{spec.name} keeps no built state to save; methods that do: {', '.join(savable())}")
    task = task_from_args(args)
    config = method_config(args, args.method)
    method = build_method(model_from_args(args), task, args.method, config, seed=args.seed, shots=args.shots,
                          prompt_format=args.prompt_format, progress=partial(tqdm_progress, desc=args.method))
    path = method.save(args.out)
    print(f"{args.method} built from {task.name} ({len(task.inputs)} examples) in {method.build_s:.1f}s, "
          f"{method.stored_parameters} stored parameters -> {path}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "build", "build one method from all of a task's examples and save it to a file",
                "icl-lab build --method site --data sentiment --out site.safetensors --site-steps 40",
                "icl-lab build --method site@paper --data my_task.csv --out paper.safetensors")
    p.add_argument("--method", required=True,
                   help=f"the method: one of {', '.join(savable())}, or 'name@preset' (e.g. site@paper)")
    add_task_args(p)
    p.add_argument("--out", required=True, help="the .safetensors file to write")
    add_seed(p, "seed of the method's own sampling (demonstrations, initialisation)")
    p.add_argument("--shots", type=int, default=SHOTS,
                   help=f"demonstrations per few-shot prompt, for the methods that show ICL prompts (default: {SHOTS})")
    add_prompt_format(p)
    add_model_args(p)
    for name in savable():
        add_method_flags(p, REGISTRY[name])
    p.set_defaults(func=cmd_build)
