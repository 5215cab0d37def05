"""What every tab of the app shares: the model, each visitor's private state, cancelling, and event wiring.

State that belongs to a visitor (their task, their built methods, their files, their cancel flags) lives in
`gr.State` or is keyed by the browser session; the model is shared and every change to it is scoped by
`LoadedModel.lock`, so visitors never see each other's hooks.
"""

from __future__ import annotations

import functools
import gc
import inspect
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradio as gr

from icr_app.app.i18n import say
from icr_app.app.messages import translated_error
from icr_app.core.artefacts import ArtefactError
from icr_app.core.loading import LoadOptions
from icr_app.core.models import LoadedModel, installed_models, load_model, release
from icr_app.core.progress import Cancelled
from icr_app.core.scoring import LabelError
from icr_app.core.tasks import TaskError

MAX_QUERY_CHARS = 2000
MEMO_SIZE = 512
USER_ERRORS = (TaskError, LabelError, ArtefactError, ValueError)

# Concurrency groups: reading a task file never waits behind the model; answers and long jobs queue apart,
# so one visitor's build does not hold up another's answer (both then take turns on the model's lock).
TASKS, ANSWERS, JOBS = "tasks", "answers", "jobs"
LIMITS = {TASKS: None, ANSWERS: int(os.environ.get("ICL_LAB_CONCURRENCY", "4")), JOBS: 2}

try:  # on a ZeroGPU Space, model work runs inside @spaces.GPU; elsewhere the decorator is not there
    import spaces

    on_gpu: Callable[[Callable], Callable] = spaces.GPU
except ImportError:
    def on_gpu(fn: Callable) -> Callable:
        return fn


def clip_query(query: str) -> str:
    query = (query or "").strip()
    if not query:
        raise gr.Error(say("error.no_query"))
    if len(query) > MAX_QUERY_CHARS:
        gr.Warning(say("warning.query_cut", n=MAX_QUERY_CHARS))
        query = query[:MAX_QUERY_CHARS]
    return query


def user_errors(fn: Callable) -> Callable:
    """Turn the backend's input errors into gr.Error, so the page shows the message and keeps its state; a
    generator (a handler that updates its outputs as it goes) stays one, as Gradio needs."""

    @contextmanager
    def translated() -> Iterator[None]:
        try:
            yield
        except gr.Error:
            raise
        except Cancelled:
            raise gr.Error(say("error.cancelled")) from None
        except USER_ERRORS as err:
            raise gr.Error(translated_error(err)) from None

    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def generator(*args, **kwargs):
            with translated():
                yield from fn(*args, **kwargs)
        return generator

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with translated():
            return fn(*args, **kwargs)

    return wrapped


def _session(request: gr.Request | None) -> str:
    return getattr(request, "session_hash", None) or "local"


@dataclass
class AppContext:
    """The shared model plus the per-session bookkeeping that the tabs' handlers use.

    The app holds one model at a time (the memory goal): `switch` loads another for everyone, and handlers
    read `ctx.lm` when they run, never at page build, so they always use the current one.
    """

    lm: LoadedModel
    options: LoadOptions = field(default_factory=LoadOptions)  # how `switch` loads a model (the CLI's flags)
    _cancel: dict[tuple[str, str], threading.Event] = field(default_factory=dict)
    _memo: OrderedDict[tuple, Future] = field(default_factory=OrderedDict)
    _memo_lock: threading.Lock = field(default_factory=threading.Lock)
    _dirs: dict[str, Path] = field(default_factory=dict)
    _switching: threading.Lock = field(default_factory=threading.Lock)

    @property
    def model_choices(self) -> list[str]:
        return list(dict.fromkeys([self.lm.name, *installed_models()]))

    def switch(self, name: str) -> LoadedModel:
        """Make `name` the app's model, releasing the previous one first (one in memory at a time)."""
        with self._switching:
            if name != self.lm.name:
                old = self.lm.name
                release(old)
                with self._memo_lock:
                    self._memo.clear()
                gc.collect()
                self.lm = load_model(name, self.options)
        return self.lm

    def memo(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """`compute()` once per `key` under the current model (the last MEMO_SIZE kept), for answers that depend on
        nothing else and are asked again when another panel or tab shows the same query. A caller asking while
        another computes it waits for that result instead of computing it twice."""
        key = (id(self.lm), self.lm.name, *key)
        with self._memo_lock:
            future = self._memo.get(key)
            mine = future is None
            if mine:
                future = self._memo[key] = Future()
                while len(self._memo) > MEMO_SIZE:
                    self._memo.popitem(last=False)
            else:
                self._memo.move_to_end(key)
        if mine:
            try:
                future.set_result(compute())
            except BaseException as err:  # not kept: the next caller tries again
                with self._memo_lock:
                    self._memo.pop(key, None)
                future.set_exception(err)
        return future.result()

    def cancel_flag(self, request: gr.Request | None, kind: str) -> threading.Event:
        """One flag per session and kind of job, so Cancel on one tab never stops another tab's job."""
        return self._cancel.setdefault((_session(request), kind), threading.Event())

    def session_dir(self, request: gr.Request | None) -> Path:
        """A private temporary folder per browser session, removed when the session ends."""
        key = _session(request)
        if key not in self._dirs:
            self._dirs[key] = Path(tempfile.mkdtemp(prefix="icl-lab-"))
        return self._dirs[key]

    def end_session(self, request: gr.Request) -> None:
        key = _session(request)
        for flag in [k for k in self._cancel if k[0] == key]:
            self._cancel.pop(flag, None)
        folder = self._dirs.pop(key, None)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def progress(self, progress: gr.Progress, request: gr.Request | None, kind: str,
                 desc: str) -> Callable[..., Iterable]:
        """A progress wrapper for the backend that also stops the job when the user pressed Cancel."""
        flag = self.cancel_flag(request, kind)
        flag.clear()

        def wrap(it: Iterable, desc: str = desc, **_: object) -> Iterable:
            for item in progress.tqdm(it, desc=desc):
                if flag.is_set():
                    raise Cancelled()
                yield item

        return wrap

    def cancel_button(self, button: gr.Button, kind: str) -> None:
        def cancel(request: gr.Request) -> None:
            self.cancel_flag(request, kind).set()

        button.click(cancel, None, None, queue=False, api_name=f"cancel_{kind}")


def on(event: Callable, fn: Callable, inputs: Any, outputs: Any, api_name: str | bool, group: str = ANSWERS,
       **kwargs: Any) -> Any:
    """Wire a handler: input errors shown as messages, the handler queued in its concurrency group (model work
    inside @spaces.GPU on a ZeroGPU Space)."""
    handler = user_errors(fn) if group == TASKS else on_gpu(user_errors(fn))
    return event(handler, inputs, outputs, api_name=api_name, concurrency_id=group,
                 concurrency_limit=LIMITS[group], **kwargs)
