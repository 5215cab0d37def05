"""A real browser (Debian's chromium driven by Playwright) uses the app as a person would."""

import os
import shutil

import pytest

from icr_app.app import launch

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None and os.environ.get("CI") != "true":  # CI installs chromium; there a missing one fails
    pytest.skip("chromium is not installed (apt-get install chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def url(lm):
    demo = launch(lm, prevent_thread_lock=True, server_name="127.0.0.1", quiet=True)
    yield demo.local_url
    demo.close()


def test_upload_answer_and_plots_render(url, tmp_path):
    data = tmp_path / "moods.csv"
    rows = [("sunny picnic with friends", "happy"), ("my dog is lost", "sad")] * 6
    data.write_text("text,label\n" + "\n".join(f"{x},{y}" for x, y in rows))
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        page.goto(url)
        page.locator("input[type=file]").first.set_input_files(str(data))
        page.get_by_text("12 examples; classification over 2 labels: happy, sad").wait_for(timeout=60_000)
        page.get_by_role("tab", name="SITE head map").click()
        page.get_by_role("button", name="Build SITE").click()
        page.get_by_text("SITE for moods").wait_for(timeout=120_000)
        page.get_by_label("Query").fill("a lovely walk in the park")
        page.get_by_role("button", name="Answer", exact=True).click()
        page.get_by_text("ms · prompt").nth(2).wait_for(timeout=60_000)
        page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 4", timeout=30_000)
        text = page.inner_text("body")
        for title in ("Zero-shot", "Few-shot", "SITE (task embedding)", "ICR"):
            assert title in text
        assert text.count("ms · prompt") >= 3  # zero-shot, few-shot and SITE answered (ICR needs its router)
        page.screenshot(path=str(tmp_path / "app.png"), full_page=True)
        browser.close()
    assert (tmp_path / "app.png").stat().st_size > 10_000
