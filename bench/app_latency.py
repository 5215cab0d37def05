"""Measure the app as a user meets it: launch to first answer, picking a built-in task to all four default panels
answered, one build and one run of every tab, and the server's peak memory with every tab used.

Run on an idle machine: python bench/app_latency.py [--port 7861] [--model smollm2-135m] [--tasks emotion,spam]
It starts `python app.py` in a subprocess (a warm model cache assumed: run the app once before), drives it
through its HTTP API with gradio_client (what the page's buttons call), and prints what it measured. Peak
resident memory is the server process's VmHWM after every tab's main action has run once.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from gradio_client import Client

ROOT = Path(__file__).resolve().parents[1]
QUERY = "The plot was thin but the actors made it a joy to watch."
PANELS = ["zero-shot", "few-shot", "site", "icr"]
FLOW = (1, "all heads", 0.1, "re-weighting")  # the anchor tab's layer, heads, threshold and experiment


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def wait_for_client(url: str, proc: subprocess.Popen, timeout: float) -> Client:
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        if proc.poll() is not None:
            raise SystemExit(f"the app exited with code {proc.returncode}")
        try:
            return Client(url, verbose=False)
        except Exception:
            time.sleep(0.2)
    raise SystemExit("the app did not come up in time")


def pick_task(c: Client, task: str) -> float:
    """Seconds from picking a built-in task to the last of the four default panels answering (the page runs the
    four answers after the task has loaded, as here)."""
    t0 = time.perf_counter()
    c.predict(task, api_name="/load_builtin")
    jobs = [c.submit(QUERY, 10, 0, PANELS, api_name=f"/answer_{k.replace('-', '_')}") for k in PANELS]
    for job in jobs:
        job.result()
    return time.perf_counter() - t0


def timed(fn, *args, **kwargs) -> float:
    t0 = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=7861)
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--tasks", default="emotion,spam,headline-topic,antonyms,sarcasm",
                    help="built-in tasks to pick, one after another (the median is reported)")
    args = ap.parse_args()
    env = {**os.environ, "GRADIO_SERVER_PORT": str(args.port), "ICL_LAB_MODEL": args.model}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows: list[tuple[str, float]] = []
    try:
        c = wait_for_client(f"http://127.0.0.1:{args.port}/", proc, 300)
        c.predict(QUERY, 10, 0, PANELS, api_name="/answer_zero_shot")
        rows.append(("launch -> first zero-shot answer", time.perf_counter() - t0))
        picks = [pick_task(c, task) for task in args.tasks.split(",")]
        rows.append((f"pick a built-in task -> 4 panels (median of {len(picks)})", statistics.median(picks)))
        rows.append(("pick a built-in task -> 4 panels (slowest)", max(picks)))
        c.predict("sentiment", api_name="/load_builtin")
        rows.append(("SITE tab: build SITE (100 steps, sentiment)", timed(c.predict, 100, 0, api_name="/build_site")))
        others = ["task-vector", "function-vector", "i2cl", "icv", "lora"]
        rows.append(("build every other method (sentiment)", timed(c.predict, others, 10, 0,
                                                                   api_name="/build_methods")))
        rows.append(("ICR tab: routing maps", timed(c.predict, QUERY, api_name="/icr_maps")))
        rows.append(("tour: zero- vs few-shot", timed(c.predict, QUERY, 10, 0, api_name="/tour_step1")))
        rows.append(("anchor tab: flow, 4 prompts", timed(c.predict, 4, 10, 0, *FLOW, api_name="/flow")))
        rows.append(("anchor tab: isolation", timed(c.predict, 5, 10, 0, *FLOW, api_name="/isolation")))
        for kind in ("re-weighting", "compression", "confusion"):
            rows.append((f"anchor tab: {kind}", timed(c.predict, 40, 10, 0, *FLOW[:3], kind,
                                                      api_name="/anchor_experiment")))
        rows.append(("rank-1 tab: all layers", timed(c.predict, 15, 10, 0, api_name="/rank1")))
        with cf.ThreadPoolExecutor(1) as pool:
            rows.append(("evaluate tab: 4 methods, 20 queries", timed(
                lambda: pool.submit(c.predict, PANELS, 20, 10, 0, "zero-shot", "site",
                                    api_name="/evaluate").result())))
        rss = peak_rss_mib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(30)
    print(f"model={args.model} cores={os.cpu_count()}")
    print(f"{'measure':<52} {'seconds':>8}")
    for name, seconds in rows:
        print(f"{name:<52} {seconds:>8.2f}")
    print(f"peak resident memory of the app, every tab used: {rss:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
