"""The page in English and Simplified Chinese: which language a visitor reads, and the two ways a string gets there.

Gradio's `gr.I18n` translates in the browser, by the browser's locale, what the page is built with: component
labels, infos, button and Markdown values, tab and accordion labels, choices' display names. Use `t(key)` there.
It never sees what the server sends later (a handler's Markdown, gr.Error and gr.Warning messages, figure notes):
`say(key, ...)` writes those in the visitor's language, read from the request that the handler serves.

The visitor's language is the page's switch (a cookie, applied to the browser's locale when the page loads:
`APPLY_CHOICE`, run from the page's head so that it comes as early as Gradio lets it), or else the browser's
Accept-Language, which Chromium and Firefox derive from the same setting as the locale that Gradio's frontend
reads. The strings themselves are data, read by `icr_app.app.strings`.
"""

from __future__ import annotations

from http.cookies import SimpleCookie

import gradio as gr
from gradio.context import LocalContext
from gradio.i18n import I18nData

from icr_app.app.strings import CHINESE, ENGLISH, strings
from icr_app.methods import REGISTRY

LANGUAGES = {ENGLISH: "English", CHINESE: "简体中文"}
COOKIE = "icl_lab_lang"
# Accept-Language tags read as Simplified Chinese: a browser set to it sends zh-CN, the others are its variants.
SIMPLIFIED = ("zh", "zh-cn", "zh-hans", "zh-sg", "zh-hans-cn")

# The switch's choice, kept in a cookie so the server reads it with every request, then a reload: the whole page,
# the server's text included, redraws in the new language.
REMEMBER_CHOICE = f"""(lang) => {{
  document.cookie = `{COOKIE}=${{lang}}; path=/; max-age=31536000; SameSite=Lax`;
  location.reload();
}}"""
# On page load, a language chosen on the switch replaces the browser's locale in Gradio's frontend: its i18n
# module (svelte-i18n's store behind `changeLocale`, the one Gradio's own Settings panel calls) is found among
# the scripts the page loaded, and importing the same URL again gives the same module.
APPLY_CHOICE = f"""async () => {{
  const chosen = document.cookie.split('; ').find(c => c.startsWith('{COOKIE}='));
  if (!chosen) return;
  const core = performance.getEntriesByType('resource').map(e => e.name)
    .find(n => /\\/assets\\/core-[^/]*\\.js$/.test(n));
  if (core) (await import(core)).changeLocale(chosen.split('=')[1]);
}}"""


def translations() -> gr.I18n:
    """What the browser translates the page with: every string the page, its methods and analyses have now."""
    return gr.I18n(**strings())


def t(key: str) -> I18nData:
    """A string of the page as built, translated in the browser; a key missing from the strings fails at build."""
    if key not in strings()[ENGLISH]:
        raise KeyError(f"no string '{key}' in the page's strings.en.yaml nor in a method's or analysis's strings.yaml")
    return I18nData(key)


def method_label(name: str) -> I18nData | str:
    """A method's title as the page is built: translated where the strings have it, else the registry's title (a
    method registered without strings shows in English)."""
    key = f"method.{name}"
    return I18nData(key) if key in strings()[ENGLISH] else REGISTRY[name].title


def method_title(name: str) -> str:
    """A method's title in the visitor's language (the registry's title where the strings lack it)."""
    key = f"method.{name}"
    return say(key) if key in strings()[ENGLISH] else REGISTRY[name].title


def _accepted(header: str) -> str | None:
    """The first of the page's languages in an Accept-Language header, by its q-values."""
    tags = []
    for part in header.split(","):
        tag, _, q = part.strip().partition(";q=")
        try:
            tags.append((-float(q or 1), tag.strip().lower()))
        except ValueError:
            continue
    for _, tag in sorted(tags):
        if tag in SIMPLIFIED:
            return CHINESE
        if tag.split("-")[0] == "en":
            return ENGLISH
    return None


def language(request: gr.Request | None = None) -> str:
    """The visitor's language for the request being served (English outside a request: the CLI, the tests)."""
    request = request or LocalContext.request.get(None)
    headers = getattr(request, "headers", None) or {}
    chosen = SimpleCookie(headers.get("cookie", "")).get(COOKIE)
    if chosen is not None and chosen.value in LANGUAGES:
        return chosen.value
    return _accepted(headers.get("accept-language", "")) or ENGLISH


def say(key: str, **values: object) -> str:
    """A string that the server sends (a handler's text, a message), in the visitor's language."""
    return strings()[language()][key].format(**values)


def language_switch() -> gr.Radio:
    """The page's language switch (it shows the visitor's language once the page has loaded, `follow_choice`)."""
    switch = gr.Radio([(name, code) for code, name in LANGUAGES.items()], value=ENGLISH, label=t("language"),
                      container=False, elem_id="language-switch")
    switch.input(None, switch, None, js=REMEMBER_CHOICE)
    return switch


def follow_choice(demo: gr.Blocks, switch: gr.Radio) -> None:
    """On page load, show the visitor's language on the switch, and after a choice on the switch send the tabs'
    labels again: Gradio's frontend formats a tab's label once, when the page is laid out, which can be before
    `APPLY_CHOICE` has changed the locale (it loads the locale's own strings first), and a tab not opened yet
    keeps that label until its props change."""
    tabs = [block for block in demo.blocks.values() if isinstance(block, gr.Tab)]

    def chosen(request: gr.Request) -> list:
        relabel = [gr.update(label=tab.label) if COOKIE in request.headers.get("cookie", "") else gr.skip()
                   for tab in tabs]
        return [language(request), *relabel]

    demo.load(chosen, None, [switch, *tabs], queue=False, show_progress="hidden")
