"""Every string the page shows, in English and Simplified Chinese, under one key each (`icr_app.app.i18n`).

The words are data: the page's own in `strings.en.yaml` and `strings.zh-CN.yaml` beside this module, each method's
and analysis's in the `strings.yaml` of its folder (carried by its spec, `MethodSpec.strings`), so a method from
another package brings its words with it. The backend's errors are keyed by their code, "error.<code>": the
English is the backend's own message (`core.errors.MESSAGES`), the Chinese is in strings.zh-CN.yaml with the same
placeholders (`messages.translated_error`).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path

import yaml

from icr_app.analyses import REGISTRY as ANALYSES
from icr_app.core.errors import MESSAGES
from icr_app.core.strings import Strings
from icr_app.methods import REGISTRY

ENGLISH, CHINESE = "en", "zh-CN"
_HERE = Path(__file__).parent


@cache
def page_strings() -> dict[str, dict[str, str]]:
    """The page's own words per language, the backend's English messages among them."""
    own = {lang: yaml.safe_load((_HERE / f"strings.{lang}.yaml").read_text(encoding="utf-8"))
           for lang in (ENGLISH, CHINESE)}
    own[ENGLISH].update({f"error.{code}": message for code, message in MESSAGES.items()})
    return own


def _folders() -> Iterator[tuple[str, Strings]]:
    yield from ((f"analysis '{spec.name}'", spec.strings) for spec in ANALYSES.values())
    yield from ((f"method '{spec.name}'", spec.strings) for spec in REGISTRY.values())


@cache
def _merged(methods: tuple[str, ...]) -> dict[str, dict[str, str]]:
    merged = {lang: dict(table) for lang, table in page_strings().items()}
    for owner, strings in _folders():
        for lang, table in strings.items():
            if lang not in merged:  # a language the page does not speak
                continue
            taken = table.keys() & merged[lang].keys()
            if taken:
                raise ValueError(f"{owner}'s strings.yaml defines key(s) another folder or the page has: "
                                 f"{', '.join(sorted(taken))}")
            merged[lang].update(table)
    return merged


def strings() -> dict[str, dict[str, str]]:
    """The page's words with every registered method's and analysis's, per language (merged again when a method
    joins the registry: `methods` is the key of the memo); a ValueError when two folders claim one key."""
    return _merged(tuple(REGISTRY))
