"""`rank1`: check ICL-as-a-rank-1-update per layer on one query of a task and print the summary."""

from __future__ import annotations

import argparse
import json
from functools import partial
from pathlib import Path

import torch

from icr_app.analyses.rank1.analysis import as_dtype, rank1_analysis, summary_table
from icr_app.cli.flags import (
    add_analysis_args,
    add_prompt_format,
    command,
    model_from_args,
    task_from_args,
    tqdm_progress,
)
from icr_app.core.prompts import Template


def cmd_rank1(args: argparse.Namespace) -> int:
    task = task_from_args(args)
    lm = as_dtype(model_from_args(args), getattr(torch, args.compute_dtype))
    report = rank1_analysis(lm, task, layer=args.layer, shots=args.shots, n_transfer=args.n_transfer,
                            seed=args.seed, template=Template().in_format(args.prompt_format, lm.tokenizer),
                            progress=partial(tqdm_progress, desc="rank1"))
    print(summary_table(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_json(), indent=2))
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "rank1", "ICL as a rank-1 weight update: check the identity per layer",
                "icl-lab rank1 --data sentiment --compute-dtype float64 --json rank1.json")
    add_analysis_args(p)
    add_prompt_format(p)
    p.add_argument("--layer", type=int, default=None, help="check one layer (default: every layer)")
    p.add_argument("--shots", type=int, default=5, help="demonstrations in the with-context prompt")
    p.add_argument("--n-transfer", type=int, default=3, help="other queries for the transfer check")
    p.add_argument("--compute-dtype", default="float32", choices=["float32", "float64"],
                   help="the dtype the identity is checked in, whatever --dtype loaded (float64 shows it is exact "
                        "up to rounding)")
    p.add_argument("--json", default=None, help="write the report (max_abs_error per layer, ...) to this file")
    p.set_defaults(func=cmd_rank1)
