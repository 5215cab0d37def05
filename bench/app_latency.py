"""Measure the app as a user meets it, in Chromium: launch to the four default panels answered, picking a built-in
task to the four panels answered again, every tab's main action once, and the server's peak memory after all of it.

Run on an idle machine (a warm model cache assumed: run the app once before):

    python bench/app_latency.py [--port 7861] [--models smollm2-135m,gemma3-270m] [--tasks emotion,...] [--skip-tabs]

It opens Debian's chromium (Playwright), then starts `python app.py` in a subprocess and drives its page the way
the browser tests do (tests/browser.py). A task is picked in the task picker, first with the query box empty (so
the task's one-click query is asked and its shipped answers shown), then with a query typed in (which the panels
compute). A button is pressed, and an action ends when Gradio's pending marks are gone and what it should show is
on the page. Launch and picking are timed by the page itself (`WATCH_PANELS`: the browser's clock when the answer
panels changed), the tabs' actions from the click to the page settled. Peak resident memory is the server
process's VmHWM at the end. Each model is launched in turn; one table, a column per model.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import browser as ui  # noqa: E402  (tests/browser.py: the page helpers the browser tests use)

from icr_app.methods import REGISTRY  # noqa: E402

TASKS = "emotion,spam,headline-topic,fact-check,sarcasm"
OWN_QUERY = "The service was slow, but the staff were friendly and the food was worth the wait"
SHOWN = 4  # the default panels: zero-shot, few-shot, SITE, ICR
LONG = 900_000  # ms: building on the real model takes minutes (the tests' TIMEOUT is for the tiny one)


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def serve(url: str, proc: subprocess.Popen, timeout_s: float) -> None:
    """Return as soon as the server answers HTTP (polled every 0.1 s: a browser's retries back off for seconds)."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"the app exited with code {proc.returncode}")
        try:
            urllib.request.urlopen(url, timeout=5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the app did not come up in time")


def pick(page, task: str, query: str = "") -> float:
    """Seconds from choosing `task` in the picker to the last change of the answer panels (the browser's clock),
    once their pending marks are gone; the tabs' work that follows the panels (tour, ICR maps) is not counted.
    Then waits for all. With `query` typed first, the panels answer it (computed) instead of the task's
    one-click query (whose answers ship with the app)."""
    page.get_by_label("Query").fill(query)
    t0 = time.time()
    ui.pick_task(page, task)
    ui.wait_idle(page, ui.PANELS)
    page.wait_for_function(ui.answered(SHOWN), timeout=ui.TIMEOUT)
    seconds = ui.panels_changed_at(page) - t0
    ui.wait_idle(page)
    return seconds


def timed(action: Callable[[], None]) -> float:
    t0 = time.perf_counter()
    action()
    return time.perf_counter() - t0


def press(page, button: str, until: str | None = None) -> Callable[[], None]:
    """Press `button` on the visible tab, then wait for the page to settle (and for the JS `until`, when given)."""
    def action() -> None:
        page.get_by_role("button", name=button, exact=True).filter(visible=True).click()
        ui.wait_idle(page, timeout=LONG)
        if until:
            page.wait_for_function(until, timeout=LONG)
    return action


def title_has(text: str) -> str:
    return f"({ui.TITLES})().some(t => t.includes({text!r}))"


class Rows(list):
    """(measure, seconds) rows, each also printed to stderr as it is measured."""

    def append(self, row: tuple[str, float]) -> None:
        print(f"{row[0]}: {row[1]:.2f} s", file=sys.stderr, flush=True)
        super().append(row)


def every_tab(page) -> list[tuple[str, float]]:
    """Each tab's main action once on the default task (sentiment), and building every other method."""
    rows = Rows()
    pick(page, "sentiment")
    for spec in REGISTRY.values():
        page.get_by_label(spec.title, exact=True).check()
    ui.wait_idle(page)
    rows.append(("build every method not shipped (FV, I2CL, LoRA)",
                 timed(press(page, "Build selected methods", ui.answered(len(REGISTRY))))))
    ui.open_tab(page, "Tour")
    page.get_by_label("Query").fill("The waiter forgot our order twice.")
    rows.append(("Tour: try step 1 (zero- vs few-shot)",
                 timed(press(page, "Try it with the query above", title_has("The waiter forgot")))))
    ui.open_tab(page, "SITE head map")
    rows.append(("SITE: build (default settings)", timed(press(page, "Build SITE"))))
    ui.open_tab(page, "ICR routing")
    rows.append(("ICR routing: answer and route", timed(press(page, "Answer"))))
    ui.open_tab(page, "LoRA (explicit fine-tuning)")
    ui.set_number(page, "at most this many training steps", 20)
    rows.append(("LoRA: fine-tune 20 steps", timed(press(page, "Fine-tune LoRA",
                                                          f"({ui.PLOTS_WITH_DATA})().filter(x => x).length >= 2"))))
    ui.open_tab(page, "Anchor flow")
    ui.set_number(page, "prompts to average", 2)
    rows.append(("Anchor flow: compute flow (2 prompts)", timed(press(page, "Compute flow", title_has("2 prompts")))))
    rows.append(("Anchor flow: isolation", timed(press(page, "Run isolation"))))
    rows.append(("Anchor flow: re-weighting experiment", timed(press(page, "Run experiment"))))
    ui.open_tab(page, "Rank-1 update")
    rows.append(("Rank-1: run the check", timed(press(page, "Run the rank-1 check"))))
    ui.open_tab(page, "Evaluate")
    ui.set_number(page, "held-out queries", 20)
    rows.append(("Evaluate: 20 held-out queries", timed(press(page, "Evaluate", title_has("20 held-out")))))
    return rows


def measure(args: argparse.Namespace, model: str) -> tuple[list[tuple[str, float]], float]:
    """Launch the app on `model` and drive its page: the rows measured and the server's peak memory (MiB)."""
    env = {**os.environ, "GRADIO_SERVER_PORT": str(args.port), "ICL_LAB_MODEL": model}
    rows = Rows()
    with sync_playwright() as p:
        # the visitor's browser is open before the app starts, as it is for someone who launches it
        browser = p.chromium.launch(executable_path=ui.CHROMIUM, args=ui.ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1600})
        page.add_init_script(ui.WATCH_PANELS)
        t0 = time.time()
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{args.port}/"
            serve(url, proc, 300)
            rows.append(("launch -> page served", time.time() - t0))
            page.goto(url)
            page.wait_for_function(ui.answered(SHOWN), timeout=ui.TIMEOUT)
            rows.append(("launch -> first panel answered", ui.panels_answered_at(page, 1) - t0))
            rows.append((f"launch -> {SHOWN} default panels answered", ui.panels_answered_at(page, SHOWN) - t0))
            ui.wait_idle(page)
            picks = [pick(page, task) for task in args.tasks.split(",")]
            rows.append((f"pick a built-in task -> {SHOWN} panels answered (median of {len(picks)})",
                         statistics.median(picks)))
            rows.append((f"pick a built-in task -> {SHOWN} panels answered (slowest)", max(picks)))
            own = [pick(page, task, f"{OWN_QUERY} ({task})") for task in args.tasks.split(",")]
            rows.append((f"pick with a typed query (computed) -> {SHOWN} panels (median of {len(own)})",
                         statistics.median(own)))
            page.get_by_label("Query").fill("")
            if not args.skip_tabs:
                rows.extend(every_tab(page))
            rss = peak_rss_mib(proc.pid)
        finally:
            proc.terminate()
            proc.wait(30)
        browser.close()
    return rows, rss


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=7861)
    ap.add_argument("--models", default="smollm2-135m", help="comma list: each launched in turn, one column each")
    ap.add_argument("--tasks", default=TASKS, help="built-in tasks to pick one after another (median reported)")
    ap.add_argument("--skip-tabs", action="store_true", help="only launch and task picking")
    args = ap.parse_args()
    models = args.models.split(",")
    measured = {model: measure(args, model) for model in models}
    print(f"cores={os.cpu_count()} tasks picked: {args.tasks}")
    print(f"| {'measure':<62} | " + " | ".join(models) + " |\n|---|" + "---:|" * len(models))
    names = [name for name, _ in measured[models[0]][0]]
    for i, name in enumerate(names):
        print(f"| {name:<62} | " + " | ".join(f"{measured[m][0][i][1]:.2f} s" for m in models) + " |")
    used = "" if args.skip_tabs else ", every tab used"
    print(f"| {'peak resident memory of the app server' + used:<62} | "
          + " | ".join(f"{measured[m][1]:.0f} MiB" for m in models) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
