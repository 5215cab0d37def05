"""How a figure gets its words: every figure builder takes `say`, which turns a string's key (and the values the
string names) into text in the reader's language.

The app passes its own `icr_app.app.i18n.say` (the visitor's language, the strings in `icr_app.app.strings`), so the
builders in the layers below the app name their words by key without importing it. Plotly's own placeholders in a
hover template (`%{x}`) are written with doubled braces in the strings, since `say` fills in `{name}`s.
"""

from __future__ import annotations

from typing import Protocol


class Say(Protocol):
    def __call__(self, key: str, /, **values: object) -> str: ...
