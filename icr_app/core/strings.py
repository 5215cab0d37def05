"""A folder's words on the page, as data: `strings.yaml` beside its code, one table of key -> text per language.

A method or an analysis keeps its words (its title, tab, explanations, figure labels) in its own folder, so that
adding one touches no file of the page; the app merges every folder's tables with its own (`app.strings`). The
library reads them only to carry them in the folder's spec: it never shows them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml

Strings = Mapping[str, Mapping[str, str]]  # language code ("en", "zh-CN") -> key -> text
FILE = "strings.yaml"


def folder_strings(module_file: str | Path) -> Strings:
    """The tables of the `strings.yaml` in the folder of `module_file` (a module's `__file__`), checked: a mapping of
    language codes to mappings of keys to non-empty text; a ValueError naming the file otherwise."""
    path = Path(module_file).with_name(FILE)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise ValueError(f"{path}: cannot read the folder's words ({err})") from err
    if not isinstance(data, dict) or not all(isinstance(table, dict) for table in data.values()):
        raise ValueError(f"{path}: expected one mapping of key to text per language, e.g. 'en: {{key: text}}'")
    for language, table in data.items():
        bad = [key for key, text in table.items() if not isinstance(text, str) or not text.strip()]
        if bad:
            raise ValueError(f"{path}: {language}: no text for {', '.join(map(str, bad))}")
    return data
