"""Data-parallel evaluation with accelerate: under `accelerate launch` each process builds every method and scores
its share of the test items; the shares are gathered into one result, the same as one process's, which the first
process prints and writes.

    accelerate launch --multi_gpu --num_processes 2 -m icr_app eval --data sentiment --methods zero-shot,few-shot

On a machine without GPUs that command runs two CPU processes (gloo): accelerate 1.15's `--cpu` flag alone starts
one process unless mpirun is set up, so `--multi_gpu` is what starts several here.

The builds are repeated in every process, not shared: a built method is a method-specific object (vectors,
an adapter, a router, trained prompts) on its process's device, with no common way to send one; every build is
seeded, so each process builds the same method. Only the scoring, which grows with the test split, is divided.
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

from icr_app.core.progress import Progress
from icr_app.core.tasks import Task
from icr_app.evaluation import MethodResult, score_interleaved
from icr_app.methods.base import Method
from icr_app.stats import wilson


def launched() -> bool:
    """Started as one of several processes (`accelerate launch`, torchrun)."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def state() -> Any:
    """accelerate's process state; made on first use, which also picks this process's GPU (or gloo on CPUs, which
    accelerate only chooses when told to)."""
    import torch
    from accelerate import PartialState

    # a suite's processes wait for the slowest one's units at the gather: far longer than the default 30 minutes
    return PartialState(cpu=not torch.cuda.is_available(), timeout=timedelta(days=7))


def finish() -> None:
    """Close the process group, so the processes exit cleanly (gloo aborts a process that exits with it open)."""
    import torch.distributed as dist

    if launched() and dist.is_initialized():
        state().destroy_process_group()


def is_main() -> bool:
    return not launched() or state().is_main_process


def barrier() -> None:
    if launched():
        state().wait_for_everyone()


def share(items: list) -> list:
    """This process's contiguous share of `items` (all of them in a single process). Call it before the model loads,
    so that on GPUs each process loads onto its own."""
    if not launched():
        return items
    with state().split_between_processes(items) as mine:
        return list(mine)


def gather(items: list) -> list:
    """Every process's `items`, joined in process order (every process must call it)."""
    if not launched():
        return items
    from accelerate.utils import gather_object

    return gather_object(items)


def scoring() -> dict[str, Any]:
    """`evaluate`'s keywords for this process: the sharded scorer when launched as several. Call it before the
    model loads, so that on GPUs each process loads onto its own."""
    if not launched():
        return {}
    state()
    return {"score": sharded}


def sharded(methods: dict[str, Method], test: Task, batch_size: int, progress: Progress) -> dict[str, MethodResult]:
    """Score this process's contiguous share of the test items, then gather every share in process order."""
    mine = share(list(range(len(test.examples))))
    part = score_interleaved(methods, test.subset(mine), batch_size, progress) if mine else {}
    parts = [p for p in gather([part]) if p]  # one dict per process; more processes than items leave some {}
    return {name: merge([p[name] for p in parts]) for name in methods}


def merge(parts: list[MethodResult]) -> MethodResult:
    """One method's shares as one result: per-item lists joined in order, per-query means weighted by share.
    Latency stays compute time per query (as one process measures it), not the shorter wall time."""
    errors = [p.error for p in parts if p.error is not None]
    if errors:
        return MethodResult(error=errors[0])
    n = sum(p.n for p in parts)
    correct = [c for p in parts for c in p.correct]

    def mean(key: str) -> float:
        return sum(getattr(p, key) * p.n for p in parts) / n

    return MethodResult(accuracy=sum(correct) / n, ci95=wilson(sum(correct), n),
                        first_token_accuracy=mean("first_token_accuracy"), latency_s=mean("latency_s"), n=n,
                        mean_prompt_tokens=mean("mean_prompt_tokens"), stored_parameters=parts[0].stored_parameters,
                        trainable_parameters=parts[0].trainable_parameters, correct=correct)
