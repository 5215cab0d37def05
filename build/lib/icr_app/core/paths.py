"""Where the package keeps its shipped data, and how a registry names code that is imported only when used."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

ASSETS = Path(__file__).resolve().parents[1] / "assets"


def resolve(target: str) -> Callable[..., Any]:
    """The function named by "package.module:function"."""
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)
