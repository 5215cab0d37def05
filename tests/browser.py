"""Driving the app's page in Debian's chromium with Playwright, as a person would: the browser tests and
`bench/app_latency.py` share these."""

from __future__ import annotations

import shutil
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from icr_app.app.strings import strings
from icr_app.methods import REGISTRY

EN = strings()["en"]
ZH = strings()["zh-CN"]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TIMEOUT = 120_000
# Every plot on the visible tab that has at least one trace with values (a placeholder has none).
VISIBLE = "Array.from(document.querySelectorAll('.js-plotly-plot')).filter(el => el.offsetParent !== null)"
PLOTS_WITH_DATA = f"""() => {VISIBLE}
  .map(el => (el.data || []).some(t => ['x', 'y', 'z', 'text'].some(k => t[k] && t[k].length)))"""
TITLES = f"""() => {VISIBLE}
  .map(el => (el.layout && el.layout.title && (el.layout.title.text || el.layout.title)) || '')"""
PANELS = ".method-panel"  # the side-by-side answer panels


def pending(within: str = "") -> str:
    """JS: how many of Gradio's marks on outputs whose event is queued or running (inside `within`, a CSS
    selector, when given)."""
    marks = ", ".join(f"{within} {m}".strip() for m in (".pending", ".generating", ".eta-bar"))
    return f"document.querySelectorAll({marks!r}).length"


# JS: how many visible method panels show an answer (their "… ms · prompt … tokens" line).
ANSWERS_SHOWN = "(document.body.innerText.split('ms · prompt').length - 1)"


def answered(n: int) -> str:
    """JS: at least `n` visible method panels show an answer."""
    return f"{ANSWERS_SHOWN} >= {n}"


# Installed before the page's own scripts (`page.add_init_script`): the browser's clock (ms since the epoch) when
# the panels last changed, and when `n` panels first showed an answer. Timing in the page itself, not by polling
# from the test, which waits behind the page's own work (rendering) on a busy machine.
WATCH_PANELS = f"""
window.__panels = {{last: 0, first: {{}}}};
new MutationObserver(records => {{
  if (!records.some(r => {{ const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
                            return el && el.closest('{PANELS}') && el.closest('.prose, .js-plotly-plot'); }}))
    return;
  const now = Date.now(), n = {ANSWERS_SHOWN};
  window.__panels.last = now;
  for (let i = 1; i <= n; i++) if (!(i in window.__panels.first)) window.__panels.first[i] = now;
}}).observe(document, {{subtree: true, childList: true, characterData: true}});
"""


def panels_changed_at(page) -> float:
    """Seconds since the epoch (the browser's clock, the machine's) when the answer panels last changed."""
    return page.evaluate("window.__panels.last") / 1000


def panels_answered_at(page, n: int) -> float:
    """Seconds since the epoch when `n` panels first showed an answer."""
    return page.evaluate(f"window.__panels.first[{n}]") / 1000


def select_tab(page, name: str, waits_s: tuple[int, ...] = (5, 15, 40)) -> None:
    """Click a tab until the page marks it selected, waiting longer after each click. CI once waited in vain for a
    tab's explanation just after the page had reloaded (cause not found), and a page busy on a loaded machine once
    let three clicks 5 s apart pass unanswered; a dropped click, which a person would simply repeat, is ruled out
    here, and what else went wrong is for the caller's wait to report (`page_state`)."""
    tab = page.get_by_role("tab", name=name, exact=True)
    for wait in waits_s:
        tab.click()
        try:
            page.wait_for_function("t => t.getAttribute('aria-selected') === 'true'", arg=tab.element_handle(),
                                   timeout=wait * 1000)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError(f"tab {name!r} was clicked {len(waits_s)} times over {sum(waits_s)} s and never selected "
                         f"({page_state(page)})")


def page_state(page) -> str:
    """What a failed wait on the page should report: the page's language and the tab that is selected."""
    selected = [t.inner_text() for t in page.get_by_role("tab", selected=True).all()]
    return f"<html lang={page.evaluate('document.documentElement.lang')!r}>, selected tab {selected}"


def open_tab(page, name: str) -> None:
    """Open a tab and wait until every plot on it has data: they fill in without a button, some (the tour's
    live ones) once the answer panels above have answered."""
    select_tab(page, name)
    page.wait_for_function(f"(xs => xs.length > 0 && xs.every(x => x))(({PLOTS_WITH_DATA})())", timeout=TIMEOUT)


def plots_have_data(page) -> list[bool]:
    page.wait_for_timeout(500)
    return page.evaluate(PLOTS_WITH_DATA)


def set_number(page, label: str, value: int) -> None:
    """Type into the visible slider's number box labelled `label`."""
    box = page.get_by_label(f"number input for {label}").filter(visible=True)
    box.fill(str(value))
    box.press("Enter")


def pick_task(page, name: str, label: str = "Built-in task") -> None:
    """Choose a built-in task in the page's task picker (labelled `label` in the page's language)."""
    page.get_by_label(label).click()
    page.get_by_role("option", name=name, exact=True).click()


def wait_idle(page, within: str = "", start_s: float = 2.0, timeout: float = TIMEOUT) -> None:
    """Wait for the events just triggered to finish (those writing inside `within`, when given): Gradio's pending
    marks appear (within `start_s`), then none is left for half a second."""
    marks = pending(within)
    try:
        page.wait_for_function(f"{marks} > 0", timeout=start_s * 1000, polling=50)
    except Exception:  # already finished (or never queued)
        pass
    while True:
        page.wait_for_function(f"{marks} === 0", timeout=timeout, polling=50)
        page.wait_for_timeout(500)
        if page.evaluate(marks) == 0:
            return


# Each tab (the tour first) and the first words of its explanation, in the order of the page.
# each tab's name and the explanation it opens on: the tour, the methods' in the registry's order, the analyses'
TABS = {"tour": "tour.intro", **{f"{spec.view.key}.tab": f"{spec.view.key}.explain" for spec in REGISTRY.values()
                                 if spec.view is not None},
        "anchors.tab": "anchors.explain", "rank1.tab": "rank1.explain", "evaluate.tab": "evaluate.explain"}


def tabs_read(page, strings: dict[str, str], tmp_path: Path, shot: str) -> None:
    """Every tab is named in `strings`' language and opens on its explanation in it, and every figure in sight
    (the tab's and the answer panels') has its title in it too: Chinese in each one, or in none."""
    page.get_by_role("tab", name=strings["tour"], exact=True).wait_for(timeout=TIMEOUT)
    assert [tab.inner_text() for tab in page.get_by_role("tab").all()] == [strings[key] for key in TABS]
    chinese = "true" if strings is ZH else "false"
    other = EN if strings is ZH else ZH
    for tab, explain in TABS.items():
        select_tab(page, strings[tab])
        try:
            page.get_by_text(strings[explain].replace("*", "")[:12]).filter(visible=True).first.wait_for(
                timeout=TIMEOUT)
        except PlaywrightTimeout:
            shown = page.get_by_text(other[explain].replace("*", "")[:6]).filter(visible=True).count()
            raise AssertionError(f"tab {strings[tab]!r} does not show its explanation in its language "
                                 f"({page_state(page)}; in the other language: {bool(shown)})") from None
        page.wait_for_function(f"({TITLES})().every(t => !t || /[\\u4e00-\\u9fff]/.test(t) === {chinese})",
                               timeout=TIMEOUT)
    page.screenshot(path=str(tmp_path / shot), full_page=True)
