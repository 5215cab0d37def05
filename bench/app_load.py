"""A class on one page: N simulated visitors (gradio_client, on 127.0.0.1 only) over the built-in models at once.

    python bench/app_load.py [--visitors 30] [--queries 2] [--max-models N] [--models smollm2-135m,gemma3-270m]

It serves `icl-lab app --models ...` in a subprocess and starts every visitor at once, each in a session of its
own: visitor i is on model i mod 2 and task i mod 6, picks its task, asks `--queries` typed queries (zero-shot and
few-shot panels), builds the task vector and asks with it (building it again, counted as `rebuilt`, when it went
with its model, released for another visitor's); every third visitor switches to the other model after its first
query. Every answer must name the visitor's own model. Every request is bounded (`--timeout` seconds for the
whole run). Afterwards the zero-shot and few-shot answers are computed again here, one at a time with the library,
on each visitor's model at the time of the answer, and must be the same (prediction, and label probabilities within
1e-4); no request may fail. It prints the answers' p50/p95 latency, the server's peak RSS (VmHWM) and the models'
sizes as the memory check counts them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from gradio_client import Client

ROOT = Path(__file__).resolve().parents[1]
TASKS = ("sentiment", "emotion", "antonyms", "country-capital", "spam", "headline-topic")
INSTANT = ("zero-shot", "few-shot")
BUILT = "task-vector"
SHOTS, SEED = 4, 0
# gradio_client's own bound is 20 s a request, which thirty visitors on a busy two-core machine exceed before the
# page answers its first (every visitor fetches the page's API at once); the whole run is bounded by --timeout
REQUEST_S = 600


@dataclass
class Visitor:
    """What one visitor asked and got: (model named by the page, task, method, query, prediction, probabilities)."""

    index: int
    answers: list[tuple] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    rebuilt: int = 0  # builds made again after the method went with its released model


def serve(models: list[str], port: int, max_models: int | None) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "icr_app", "app", "--models", ",".join(models), "--host", "127.0.0.1",
           "--port", str(port)] + (["--max-models", str(max_models)] if max_models else [])
    server = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
            return server
        except OSError:
            time.sleep(1)
    server.kill()
    raise TimeoutError("the page did not start in 10 minutes")


def queries_for(task: str, n: int) -> list[str]:
    from icr_app.core.tasks import builtin_task

    return [f"{text}." for text in builtin_task(task).inputs[:n]]  # typed: not the one-click query


class Dropped(Exception):
    """A built method's panel saying the method went with its model, which the page released for another's."""


def dropped_words() -> str:
    """What such a panel says after the model's name (the page's English)."""
    from icr_app.app.i18n import say

    return say("dropped_with_model", title="\0", model="\0").split("\0")[2][:40]


def ask(c: Client, v: Visitor, model: str, task: str, method: str, query: str) -> None:
    """One panel's answer, recorded with the model its facts line names; a panel that says why it has no answer
    (its heading and one line in italics, no facts line), or names a model not the visitor's, is an error."""
    start = time.perf_counter()
    md, fig, _prompt = c.predict(query, SHOTS, SEED, [*INSTANT, BUILT], api_name=f"/answer_{method.replace('-', '_')}")
    v.latencies.append(time.perf_counter() - start)
    lines = md.split("\n")
    if dropped_words() in md:
        raise Dropped(md)
    if len(lines) < 4 or not lines[3].startswith("model "):
        raise RuntimeError(f"{method} on {model} did not answer {query!r}: {' '.join(lines[1:])}")
    named = lines[3].split(" · ")[0].removeprefix("model ")
    if named != model:
        raise RuntimeError(f"{method} answered on {named}, where the visitor is on {model}")
    probs = _probs(fig) if fig else {}
    v.answers.append((named, task, method, query, lines[1].strip("*"), probs))


def _probs(fig: dict) -> dict[str, float]:
    """The label probabilities a panel's bar chart shows (none for an open-ended task)."""
    bars = [trace for trace in json.loads(fig["plot"])["data"] if trace.get("type") == "bar"]
    return {label: p for bar in bars for label, p in zip(bar["y"], _values(bar["x"]), strict=True)}


def _values(xs: list | dict) -> list[float]:
    """A plotly trace's numbers, as a list or as plotly's typed-array encoding."""
    if isinstance(xs, dict):
        import base64

        import numpy as np

        return np.frombuffer(base64.b64decode(xs["bdata"]), dtype=xs["dtype"]).tolist()
    return xs


def visit(url: str, i: int, models: list[str], n_queries: int) -> Visitor:
    v, task, model = Visitor(i), TASKS[i % len(TASKS)], models[0]
    try:
        c = Client(url, verbose=False, httpx_kwargs={"timeout": REQUEST_S})
        c.predict(task, api_name="/load_builtin")
        if i % 2:
            model = models[1]
            c.predict(model, api_name="/switch_model")
        for k, query in enumerate(queries_for(task, n_queries)):
            for method in INSTANT:
                ask(c, v, model, task, method, query)
            if k == 0 and i % 3 == 2:  # a visitor who changes their mind mid-run
                model = models[(i + 1) % 2]
                c.predict(model, api_name="/switch_model")
        for _ in range(3):  # built again when it went with its model (released for another visitor's), as they would
            c.predict([BUILT], SHOTS, SEED, api_name="/build_methods")
            try:
                ask(c, v, model, task, BUILT, queries_for(task, 1)[0])
                break
            except Dropped:
                v.rebuilt += 1
        else:
            raise RuntimeError(f"{BUILT} went with its model three times in a row")
    except Exception as err:  # counted and reported: a load test must not stop at the first failure
        v.errors.append(f"visitor {i}: {type(err).__name__}: {err}")
    return v


def peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def mismatches(visitors: list[Visitor]) -> list[str]:
    """The answers that differ from the library's, computed one at a time here on the model each answer names."""
    from icr_app import prebuilt
    from icr_app.app.strings import strings  # what a panel shows for an empty answer
    from icr_app.core.models import load_model, release
    from icr_app.core.tasks import builtin_task

    wrong, answers = [], [a for v in visitors for a in v.answers if a[2] in INSTANT]
    for model in sorted({a[0] for a in answers}):
        lm = load_model(model)
        for _, task, method, query, pred, probs in [a for a in answers if a[0] == model]:
            ref = prebuilt.instant_method(lm, builtin_task(task), method, SHOTS, SEED).predict([query])[0]
            empty = strings()["en"]["empty"]
            same = (ref.prediction or empty) == pred and all(abs(ref.label_probs.get(k, 0) - p) < 1e-4
                                                             for k, p in probs.items() if ref.label_probs)
            if not same:
                wrong.append(f"{model} {task} {method} {query!r}: page {pred!r}, library {ref.prediction!r}")
        release(model)
    return wrong


def run(n_visitors: int, n_queries: int, models: list[str], max_models: int | None, port: int,
        timeout: float) -> dict:
    from icr_app.core.models import model_footprint

    server = serve(models, port, max_models)
    try:
        start, pool = time.perf_counter(), ThreadPoolExecutor(n_visitors)
        futures = [pool.submit(visit, f"http://127.0.0.1:{port}/", i, models, n_queries) for i in range(n_visitors)]
        wait(futures, timeout=timeout)
        visitors = [f.result() if f.done() else Visitor(i, errors=[f"visitor {i}: not done in {timeout:.0f} s"])
                    for i, f in enumerate(futures)]
        wall, rss = time.perf_counter() - start, peak_rss(server.pid)
    finally:
        server.kill()  # a visitor still waiting on it gets an error and ends
        server.wait()
    pool.shutdown(wait=True)
    latencies = sorted(t for v in visitors for t in v.latencies)
    return {"visitors": n_visitors, "max_models": max_models, "answers": len(latencies), "wall_s": wall,
            "p50_s": statistics.median(latencies) if latencies else None,
            "p95_s": latencies[int(0.95 * (len(latencies) - 1))] if latencies else None,
            "peak_rss_gib": rss / 2**30, "model_gib": {m: model_footprint(m) / 2**30 for m in models},
            "checked": sum(a[2] in INSTANT for v in visitors for a in v.answers),
            "rebuilt": sum(v.rebuilt for v in visitors), "errors": [e for v in visitors for e in v.errors],
            "mismatches": mismatches(visitors)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--visitors", type=int, default=30)
    p.add_argument("--queries", type=int, default=2)
    p.add_argument("--models", default="smollm2-135m,gemma3-270m")
    p.add_argument("--max-models", type=int, default=None)
    p.add_argument("--port", type=int, default=7871)
    p.add_argument("--timeout", type=float, default=3600, help="seconds for the whole run, at most")
    args = p.parse_args()
    result = run(args.visitors, args.queries, args.models.split(","), args.max_models, args.port, args.timeout)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
