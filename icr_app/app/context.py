"""What every tab of the app shares: the models, each visitor's private state, cancelling, and event wiring.

State that belongs to a visitor (their model, task, built methods, files, cancel flags) lives in `gr.State` or
is keyed by the browser session. Visitors on the same model share it, and every change to it is scoped by
`LoadedModel.lock`, so they never see each other's hooks; each handler run holds its visitor's model (`Visit`).
"""

from __future__ import annotations

import functools
import inspect
import os
import shutil
import tempfile
import threading
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradio as gr
import spaces
from gradio.context import LocalContext

from icr_app.app.i18n import say
from icr_app.app.messages import translated_error
from icr_app.app.pool import Budget, BudgetError, ModelPool
from icr_app.core.artefacts import ArtefactError
from icr_app.core.loading import LoadOptions
from icr_app.core.models import LoadedModel, installed_models
from icr_app.core.progress import Cancelled
from icr_app.core.scoring import LabelError
from icr_app.core.tasks import TaskError
from icr_app.methods import load_method
from icr_app.methods.base import Method

MAX_QUERY_CHARS = 2000
MEMO_SIZE = 512
TURN_SECONDS = 300  # how long a run or a switch waits its turn for the room its visitor's model needs
USER_ERRORS = (TaskError, LabelError, ArtefactError, ValueError)

# Concurrency groups: reading a task file never waits behind the model; answers and long jobs queue apart,
# so one visitor's build does not hold up another's answer (both then take turns on the model's lock).
TASKS, ANSWERS, JOBS = "tasks", "answers", "jobs"
LIMITS = {TASKS: None, ANSWERS: int(os.environ.get("ICL_LAB_CONCURRENCY", "4")), JOBS: 2}

# ZeroGPU holds a GPU for each call for the seconds it asks (60 by default) and refuses a call asking for more than
# the visitor's daily quota has left, so each kind of call asks for its own bound: an answer takes seconds; a job (a
# build of the shown methods, an analysis, an evaluation) builds each method in at most 9 s at Llama-8B's shape on one
# H200 (BENCHMARKS.md), so two minutes cover every method on the built-in models, which are far smaller.
GPU_SECONDS = {ANSWERS: 60, JOBS: 120}


def on_gpu(fn: Callable, group: str) -> Callable:
    """`fn` inside @spaces.GPU with its group's bound: on a ZeroGPU Space each call holds a GPU while it runs;
    anywhere else (SPACES_ZERO_GPU unset) spaces.GPU returns `fn` itself."""
    return spaces.GPU(fn, duration=GPU_SECONDS[group])


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def _refused(err: BudgetError) -> gr.Error:
    """The visitor's message for a model that does not fit beside the ones in use, with the sizes."""
    kept = ", ".join(f"{model} {_mib(size)}" for model, size in err.kept.items()) or "-"
    if err.max_models is not None:
        return gr.Error(say("error.model_budget_count", name=err.name, n=err.max_models, kept=kept))
    return gr.Error(say("error.model_budget", name=err.name, need=_mib(err.need), room=_mib(err.room), kept=kept))


def _note(key: str) -> Callable[[str], None]:
    """What tells a visitor that their model is being loaded, or waits its turn: the event's progress, where the
    page shows it, and a message."""
    def note(name: str) -> None:
        text = say(key, name=name)
        gr.Progress()(0, desc=text)
        gr.Info(text)
    return note


_LOADING, _WAITING = _note("info.loading_model"), _note("info.waiting_model")


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


def _session(request: gr.Request | None = None) -> str:
    """The browser session `request` comes from; without one, the session of the event being handled (Gradio
    keeps its request in a context variable while a handler runs), else "local" (a caller outside the page)."""
    request = request or LocalContext.request.get(None)
    return getattr(request, "session_hash", None) or "local"


@dataclass
class Visit:
    """One handler run for one visitor: the model it uses, held (`ModelPool.lease`) until the run ends, so a
    switch or another visitor's choice never changes or releases the model under it."""

    session: str
    lm: LoadedModel | None = None
    leases: ExitStack = field(default_factory=ExitStack)

    def close(self) -> None:
        self.lm = None
        self.leases.close()


_VISIT: ContextVar[Visit | None] = ContextVar("icl_lab_visit", default=None)


def visiting(fn: Callable) -> Callable:
    """`fn` run as one `Visit` (a generator's every step inside it, its lease held until the last)."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def generator(*args, **kwargs):
            visit, steps = Visit(_session()), fn(*args, **kwargs)
            try:
                while True:
                    token = _VISIT.set(visit)
                    try:
                        step = next(steps)
                    except StopIteration:
                        return
                    finally:
                        _VISIT.reset(token)
                    yield step
            finally:
                visit.close()
        return generator

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        visit = Visit(_session())
        token = _VISIT.set(visit)
        try:
            return fn(*args, **kwargs)
        finally:
            _VISIT.reset(token)
            visit.close()

    return wrapped


class Memo:
    """Answers kept for one model (the last MEMO_SIZE), each computed once: a caller asking while another
    computes it waits for that result instead of computing it twice."""

    def __init__(self) -> None:
        self._futures: OrderedDict[tuple, Future] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple, compute: Callable[[], Any]) -> Any:
        with self._lock:
            future = self._futures.get(key)
            mine = future is None
            if mine:
                future = self._futures[key] = Future()
                while len(self._futures) > MEMO_SIZE:
                    self._futures.popitem(last=False)
            else:
                self._futures.move_to_end(key)
        if mine:
            try:
                future.set_result(compute())
            except BaseException as err:  # not kept: the next caller tries again
                with self._lock:
                    self._futures.pop(key, None)
                future.set_exception(err)
        return future.result()


@dataclass(eq=False)
class Parked:
    """A built method's file, written when the page released its model: read back (`AppContext.built_method`) when
    the visitor's model is loaded again, removed with the last `Built` that names it."""

    model: str
    path: Path

    def __post_init__(self) -> None:
        weakref.finalize(self, self.path.unlink, missing_ok=True)


class Built(dict):
    """A visitor's built methods, {method name: Method} (their `built` state). A method holds its model, and
    Gradio keeps a session's state for an hour after it closes, so when the pool releases a model the context
    takes that model's methods out of every visitor's `Built`, otherwise the released model would stay in memory
    through them. Each goes to a file (`parked`) and comes back when its model does, so that what a visitor built
    never changes under them; one that could not be written is `dropped`, and their panels say so."""

    def __init__(self, methods: dict | None = None, base: Built | dict | None = None) -> None:
        """`methods`, with what `base` (the visitor's previous `Built`) had parked or dropped for other names."""
        super().__init__(methods or {})
        self.parked: dict[str, Parked] = {k: v for k, v in getattr(base, "parked", {}).items() if k not in self}
        self.dropped: dict[str, str] = {k: v for k, v in getattr(base, "dropped", {}).items() if k not in self}


@dataclass
class AppContext:
    """The page's models plus the per-session bookkeeping that the tabs' handlers use.

    Each visitor has their own model: the picker sets it for their session only (`switch`), and a handler reads
    `ctx.lm` when it runs, never at page build, so it gets its visitor's model, held for the whole run. The
    models stay loaded within the pool's budget (`pool.ModelPool`).
    """

    first: LoadedModel | str  # the model every visitor starts with (a loaded one stays loaded)
    options: LoadOptions = field(default_factory=LoadOptions)  # how models load (the CLI's flags)
    models: list[str] | None = None  # what the picker offers (default: the first model and the installed ones)
    budget: Budget = field(default_factory=Budget)
    _chosen: dict[str, str] = field(default_factory=dict)  # {session: model name} where a visitor picked one
    _cancel: dict[tuple[str, str], threading.Event] = field(default_factory=dict)
    _dirs: dict[str, Path] = field(default_factory=dict)
    # every visitor's `Built`, by id (a dict is not hashable, so no WeakSet), gone from here when it goes
    _held: weakref.WeakValueDictionary = field(default_factory=weakref.WeakValueDictionary)
    _held_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        pinned = self.first if isinstance(self.first, LoadedModel) else None
        self.pool = ModelPool(self.options, self.budget, pinned, on_release=self._drop_built_on)
        self._parking = Path(tempfile.mkdtemp(prefix="icl-lab-parked-"))
        weakref.finalize(self, shutil.rmtree, self._parking, True)
        self.default = self.pool.canonical(pinned.name if pinned else self.first)

    @property
    def model_choices(self) -> list[str]:
        return list(dict.fromkeys([self.default, *(self.models or installed_models())]))

    def model_name(self, request: gr.Request | None = None) -> str:
        """The model of this visitor's session."""
        return self._chosen.get(_session(request), self.default)

    def shape(self, request: gr.Request | None = None) -> tuple[int, int]:
        """(layers, heads) of this visitor's model, without loading it (redraws outside the queue read it)."""
        return self.pool.shape(self.model_name(request))

    @property
    def lm(self) -> LoadedModel:
        """The model of the visitor whose handler is running, held until the run ends (outside a run, as when the
        page is built: the session's model as it is now)."""
        visit = _VISIT.get()
        if visit is None:  # never waits: a redraw outside the queue is told, with the sizes, to try again
            try:
                with self.pool.lease(self.model_name()) as lm:
                    return lm
            except BudgetError as err:
                raise _refused(err) from None
        if visit.lm is None:
            name = self.model_name()
            # a model released while its visitor was away comes back in its turn, once the runs holding the room end
            visit.lm = self._lease(visit, name)
        return visit.lm

    def _lease(self, visit: Visit, name: str) -> LoadedModel:
        try:
            return visit.leases.enter_context(self.pool.lease(name, _LOADING, TURN_SECONDS, _WAITING))
        except BudgetError as err:
            raise _refused(err) from None

    def switch(self, name: str, request: gr.Request | None = None) -> LoadedModel:
        """Make `name` this visitor's model (the others keep theirs), waiting its turn when it does not fit beside
        the models in use; one that cannot fit is refused with the sizes, and the visitor keeps the one they had."""
        if name not in self.model_choices:
            raise gr.Error(say("error.model_not_offered", name=name, models=", ".join(self.model_choices)))
        visit = _VISIT.get() or Visit(_session(request))
        visit.close()  # the run's hold on the previous model goes first: a budget of one model can swap
        visit.lm = self._lease(visit, name)
        self._chosen[visit.session] = visit.lm.name
        return visit.lm

    def hold(self, methods: dict, base: dict | None = None) -> Built:
        """`methods` as a visitor's `Built`, the state every handler that changes their built methods returns, so
        that releasing a model takes its methods out of it (`Built`); `base`, the `Built` they change, passes on
        what it had parked."""
        built = Built(methods, base)
        with self._held_lock:
            self._held[id(built)] = built
        return built

    def built_method(self, built: dict, name: str) -> Method | None:
        """The visitor's built method `name` on their model, read back from its file when the page released that
        model and loaded it again; None when there is none."""
        method, lm = built.get(name), self.lm
        if method is not None and method.lm is lm:
            return method
        parked = getattr(built, "parked", {}).get(name)
        if method is not None or parked is None or parked.model != lm.name:
            return None
        built[name] = load_method(parked.path, lm)
        built.parked.pop(name, None)
        return built[name]

    def _drop_built_on(self, model: str) -> None:
        with self._held_lock:
            held = list(self._held.values())
        for built in held:
            for name, method in list(built.items()):
                if method.lm.name == model:
                    built.pop(name, None)
                    try:
                        path = method.save(self._parking / f"{uuid.uuid4().hex}.safetensors")
                        built.parked[name] = Parked(model, path)
                    except (TypeError, OSError):  # no state to write, or no room for it: the panel says it went
                        built.dropped[name] = model

    def memo(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """`compute()` once per `key` under the visitor's model, for answers that depend on nothing else and are
        asked again when another panel or tab shows the same query; kept on the model, so they go with it."""
        return self.lm.memoised(("app-answers",), Memo).get(key, compute)

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
        self._chosen.pop(key, None)
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
    handler = visiting(user_errors(fn))
    handler = handler if group == TASKS else on_gpu(handler, group)
    return event(handler, inputs, outputs, api_name=api_name, concurrency_id=group,
                 concurrency_limit=LIMITS[group], **kwargs)
