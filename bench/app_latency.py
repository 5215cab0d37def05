"""Measure the app as a user meets it: start-up to first answer, one side-by-side answer, peak memory.

Run: python bench/app_latency.py [--port 7861] [--model smollm2-135m]
Starts `python app.py` in a subprocess (warm model cache assumed: run the app once before), drives it
through its HTTP API with gradio_client, and prints what it measured. Peak resident memory is the
server process's VmHWM after every panel and view has been used once.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import subprocess
import sys
import time
from pathlib import Path

from gradio_client import Client

ROOT = Path(__file__).resolve().parents[1]
QUERY = "The plot was thin but the actors made it a joy to watch."
PANELS = ["zero-shot", "few-shot", "site", "icr"]


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


def side_by_side(c: Client) -> dict[str, float]:
    """The four panels submitted at once, as the Answer button does; wall time of each and of all."""
    calls = {k: (QUERY, 10, 0, PANELS) for k in ("zero_shot", "few_shot", "site", "icr")}
    t0 = time.perf_counter()
    jobs = {k: c.submit(*args, api_name=f"/answer_{k}") for k, args in calls.items()}
    times = {}
    for k, job in jobs.items():
        job.result()
        times[k] = time.perf_counter() - t0
    times["all four"] = time.perf_counter() - t0
    return times


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=7861)
    ap.add_argument("--model", default="smollm2-135m")
    args = ap.parse_args()
    env = {**os.environ, "GRADIO_SERVER_PORT": str(args.port), "ICL_LAB_MODEL": args.model}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        c = wait_for_client(f"http://127.0.0.1:{args.port}/", proc, 300)
        c.predict(QUERY, 10, 0, PANELS, api_name="/answer_zero_shot")
        first_answer = time.perf_counter() - t0
        t1 = time.perf_counter()
        c.predict(100, 0, api_name="/build_site")
        build = time.perf_counter() - t1
        side_by_side(c)  # warm-up: first calls pay one-off costs (router encoder, code paths)
        runs = [side_by_side(c) for _ in range(3)]
        t2 = time.perf_counter()
        c.predict(4, 10, 0, api_name="/flow")
        flow = time.perf_counter() - t2
        t3 = time.perf_counter()
        c.predict(15, 10, 0, api_name="/rank1")
        rank1 = time.perf_counter() - t3
        with cf.ThreadPoolExecutor(1) as pool:
            pool.submit(c.predict, ["zero-shot", "few-shot", "icr"], 20, 10, 0, api_name="/evaluate").result()
        rss = peak_rss_mib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(30)
    print(f"model={args.model} cores={os.cpu_count()}")
    print(f"{'measure':<40} {'seconds':>8}")
    print(f"{'launch -> first zero-shot answer':<40} {first_answer:>8.2f}")
    print(f"{'build SITE (100 steps, sentiment)':<40} {build:>8.2f}")
    for k in runs[0]:
        vals = sorted(r[k] for r in runs)
        print(f"{'side-by-side: ' + k + ' (median of 3)':<40} {vals[1]:>8.2f}")
    print(f"{'anchor flow, 4 prompts':<40} {flow:>8.2f}")
    print(f"{'rank-1 check, all layers':<40} {rank1:>8.2f}")
    print(f"peak resident memory of the app: {rss:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
