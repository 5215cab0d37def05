"""Comparing result JSONs across runs: every number but the timings is determined by the seed."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[1]
TIMINGS = {"latency_s", "build_s", "latency_ratio_to_zero_shot", "latency_ratio_median", "build_s_median",
           "model"}  # the model: its path differs too


def untimed(data: Any) -> Any:
    """`data` without the timed fields (and the model's path), at any depth."""
    if isinstance(data, dict):
        return {k: untimed(v) for k, v in data.items() if k not in TIMINGS}
    if isinstance(data, list):
        return [untimed(v) for v in data]
    return data


def free_port() -> int:
    """A port no one listens on now: the default 29500 may be another run's on a shared machine."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(args: list[str], processes: int = 2) -> subprocess.CompletedProcess:
    """`accelerate launch` of `python -m icr_app ARGS` as several CPU processes (gloo), from this checkout.
    `--multi_gpu` is what starts several processes: accelerate's `--cpu` alone starts one."""
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", str(processes),
           "--num_machines", "1", "--main_process_port", str(free_port()), "--mixed_precision", "no",
           "--dynamo_backend", "no", "-m", "icr_app", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
