"""`export`: a built method's file as the files a serving stack reads (a PEFT adapter folder, a llama.cpp
control vector, lm-eval's steered-model file), through `icl.export`.

    icl-lab export --artefact lora.safetensors --to peft --out lora-peft

docs/elsewhere.md says what each format keeps and which methods have one.
"""

from __future__ import annotations

import argparse

from icr_app.api import export, load
from icr_app.cli.flags import add_model_args, command, model_from_args
from icr_app.methods import FORMATS


def cmd_export(args: argparse.Namespace) -> int:
    method = load(args.artefact, model_from_args(args))  # checks the file against the model it was built on
    path = export(method, args.to, args.out)
    print(f"{method.name} ({args.artefact}) -> {args.to}: {path}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "export", "write a built method as the files a serving stack reads (docs/elsewhere.md)",
                "icl-lab export --artefact lora.safetensors --to peft --out lora-peft")
    p.add_argument("--artefact", required=True, help="the method's file (`icl-lab build --out`)")
    p.add_argument("--to", required=True, choices=list(FORMATS),
                   help="peft: a PEFT adapter folder (LoRA); llama-cpp: a llama.cpp control vector; steered: "
                        "lm-eval's steered-model file; no method ICL Lab ships is either of the last two (the "
                        "refusal says why)")
    p.add_argument("--out", required=True, help="where to write (peft: a folder)")
    add_model_args(p, "the model the method was built on")
    p.set_defaults(func=cmd_export)
