"""ICR capacity: how far can routing move one task when α and γ are free (the same for every query)?

A router whose encoder returns a constant gives one α and one γ per task, so training it on a single task
measures what the routing itself can express, before any question of transfer. Each PID variant is
fitted on that task's own ICL prompts, trained with the same budget, and scored on the evaluation split.
This is the measurement that settled centred vs uncentred PIDs (BENCHMARKS.md, "## ICR").

  python bench/icr_capacity.py --tasks $ICL_LAB_DATA/fv/sentiment.json,$ICL_LAB_DATA/fv/present-past.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch

from icr_app.core.models import load_model
from icr_app.core.tasks import load_task
from icr_app.evaluation import evaluate
from icr_app.methods.icr import router as router_module
from icr_app.methods.icr.method import ICRConfig
from icr_app.methods.icr.train import TrainConfig, train_router


def constant_encoder(texts: list[str]) -> torch.Tensor:
    return torch.ones(len(texts), 8)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", required=True, help="comma-separated task files or built-in names")
    ap.add_argument("--variants", default="uncentred,centred")
    ap.add_argument("--examples", type=int, default=100)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--pid-prompts", type=int, default=8)
    ap.add_argument("--n-test", type=int, default=50)
    args = ap.parse_args()
    lm = load_model()
    print("| task | PIDs | train CE, first 10 steps → last 10 | zero-shot | icr, task-constant α, γ | train s |")
    print("|---|---|---|---|---|---|")
    for path in args.tasks.split(","):
        task = load_task(path)
        for variant in args.variants.split(","):
            cfg = TrainConfig(lr=args.lr, epochs=args.epochs, examples_per_domain=args.examples,
                              pid_prompts=args.pid_prompts, centred=variant == "centred")
            with tempfile.TemporaryDirectory() as out:
                t0 = time.perf_counter()
                train_router(lm, [task], out, cfg, constant_encoder, log_path=Path(out) / "log.jsonl")
                train_s = time.perf_counter() - t0
                ce = [json.loads(line)["ce"] for line in (Path(out) / "log.jsonl").read_text().splitlines()]
                router_module.minilm_encoder = lambda: constant_encoder  # the frozen encoder, held fixed here
                report = evaluate(lm, task, ["zero-shot", "icr"], n_test=args.n_test,
                                  configs={"icr": ICRConfig(router=out)})
            zs, icr = report.methods["zero-shot"].accuracy, report.methods["icr"].accuracy
            print(f"| {task.name} | {variant} | {sum(ce[:10]) / 10:.2f} → {sum(ce[-10:]) / 10:.2f} | {zs:.3f} | "
                  f"{icr:.3f} | {train_s:.0f} |", flush=True)


if __name__ == "__main__":
    main()
