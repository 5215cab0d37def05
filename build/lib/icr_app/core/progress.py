"""How long jobs report progress and notice a cancel: a wrapper around the iterable they loop over."""

from __future__ import annotations

from collections.abc import Callable, Iterable

Progress = Callable[..., Iterable]
"""Wraps an iterable to show progress (tqdm in the CLI, gr.Progress.tqdm in the app). Called as
`progress(it)` or `progress(it, desc=...)`, where a long job with several stages names the stage. The app's
wrapper raises when the user presses Cancel, so every loop that goes through it can be cancelled."""


def no_progress(it: Iterable, **_: object) -> Iterable:
    return it


class Cancelled(Exception):
    """The user stopped a long job (raised by the app's progress wrapper; never reported as a method's error)."""
