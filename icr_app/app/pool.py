"""The models a running page keeps loaded: each visitor's choice, loaded on demand, within a budget.

The models themselves live in `core.models`' per-process cache (`load_model` fills it, `release` empties it);
the pool only decides which of them stay there. It counts, per model, the visitors' computations that use it
(`lease`), and when a model must be loaded and the budget (a number of models and/or bytes) is spent, it releases
the least recently used model that no computation holds. A lease whose model cannot fit beside the ones in use
waits its turn, in the order the leases asked; one that could not fit even alone, or that waits past its bound, is
refused with the sizes (`BudgetError`), and the other visitors' models stay as they were.
"""

from __future__ import annotations

import gc
import itertools
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psutil

from icr_app.core.loading import LoadOptions
from icr_app.core.models import LoadedModel, builtin_name, load_model, model_footprint, release


class BudgetError(Exception):
    """A model that does not fit the page's budget while the models in use stay loaded."""

    def __init__(self, name: str, need: int, room: int, kept: dict[str, int], max_models: int | None) -> None:
        self.name, self.need, self.room, self.kept = name, need, room, kept
        self.max_models = max_models  # set when the number of models, not the bytes, left no room
        super().__init__(f"{name} needs {need} bytes; {room} are free beside the models in use {kept}")


@dataclass(frozen=True)
class Budget:
    """How many models, and how many bytes of them, may stay loaded at once (None: what the machine has free)."""

    max_models: int | None = None
    max_bytes: int | None = None

    def room(self, kept_bytes: int, freed_bytes: int) -> int:
        """The bytes a model about to load may take beside the models kept (`kept_bytes`), once those released
        (`freed_bytes`, still counted in the machine's used memory) are gone."""
        if self.max_bytes is not None:
            return self.max_bytes - kept_bytes
        return psutil.virtual_memory().available + freed_bytes


class ModelPool:
    """The page's loaded models by name, released least recently used first and never while leased."""

    def __init__(self, options: LoadOptions, budget: Budget = Budget(), pinned: LoadedModel | None = None,
                 on_release: Callable[[str], None] = lambda _: None) -> None:
        self.options, self.budget = options, budget
        self._on_release = on_release  # told each model released: what was built on it goes too
        # a model the caller loaded and handed in (a test's tiny one) is theirs: kept, never released
        self._pinned = {pinned.name: pinned} if pinned is not None else {}
        self._sizes: dict[str, int] = {}  # bytes of each loaded model, as the loader's memory check counts them
        self._recent: OrderedDict[str, None] = OrderedDict((name, None) for name in self._pinned)
        self._uses: Counter[str] = Counter()
        self._queue: list[tuple[int, str]] = []  # the leases waiting (their tick, their model), in the order asked
        self._ticks = itertools.count()
        self._loaded_at: dict[str, int] = {}  # the tick at which each model was last loaded
        self._shapes: dict[str, tuple[int, int]] = {}  # (layers, heads) of each model loaded once
        self._lock = threading.Condition(threading.RLock())  # notified when a lease ends

    def canonical(self, name: str) -> str:
        return name if name in self._pinned else builtin_name(name)

    def size(self, name: str) -> int:
        if name not in self._sizes:
            self._sizes[name] = (self._pinned[name].model.get_memory_footprint() if name in self._pinned
                                 else model_footprint(name, self.options))
        return self._sizes[name]

    def loaded(self) -> dict[str, int]:
        """{name: bytes} of the models kept, least recently used first."""
        with self._lock:
            return {name: self.size(name) for name in self._recent}

    @contextmanager
    def lease(self, name: str, announce: Callable[[str], None] = lambda _: None,
              wait: float = 0.0, waiting: Callable[[str], None] = lambda _: None) -> Iterator[LoadedModel]:
        """The model `name`, loaded if it is not (`announce(name)` first: a visitor sees what they wait for), and
        kept loaded until the `with` ends. When it does not fit beside the models in use, the lease takes its turn
        (`waiting(name)` first): leases are let in in the order they asked, so a model the runs keep using is
        released once the runs that hold it end, rather than never; BudgetError after `wait` seconds, or at once
        when the model could not fit even with every other model released."""
        name = self.canonical(name)
        lm = self._get(name, announce, waiting, time.monotonic() + wait)
        try:
            yield lm
        finally:
            with self._lock:
                self._uses[name] -= 1
                self._lock.notify_all()

    def _get(self, name: str, announce: Callable[[str], None], waiting: Callable[[str], None],
             deadline: float) -> LoadedModel:
        """The model, counted as used from the moment it is let in (so that no one releases it while it loads)."""
        with self._lock:
            if name not in self._pinned and not self._fits(self.size(name), list(self._pinned)):
                raise self._refusal(name)
            loading = self._take_turn(name, waiting, deadline)
            self._uses[name] += 1
        if name in self._pinned:
            return self._touch(name, self._pinned[name])
        if loading:
            announce(name)
        try:
            return self._touch(name, load_model(name, self.options))
        except BaseException:
            with self._lock:
                self._uses[name] -= 1
                if loading:
                    self._recent.pop(name, None)
                self._lock.notify_all()
            raise

    def _take_turn(self, name: str, waiting: Callable[[str], None], deadline: float) -> bool:
        """Wait (the lock held) until `name` is loaded or room is made for it, behind the leases that asked first
        for a model not loaded; whether it is now to be loaded."""
        turn = next(self._ticks)
        self._queue.append((turn, name))
        told = False
        try:
            while not self._ready(turn, name):
                if not told:
                    waiting(name)
                    told = True
                if not self._lock.wait(max(0.0, deadline - time.monotonic())) and not self._ready(turn, name):
                    raise self._refusal(name)
        finally:
            self._queue.remove((turn, name))
            self._lock.notify_all()
        if name in self._recent:
            return False
        self._recent[name] = None  # counted from now, so that concurrent loads leave room for it
        self._loaded_at[name] = next(self._ticks)
        return True

    def _ready(self, turn: int, name: str) -> bool:
        """Whether the lease `turn` may go now: its model is loaded or room is made for it, and no lease ahead of
        it waits for room, unless it waited for its model through that model's load. So each load lets in every
        lease then waiting for that model at once, and leases that come later queue behind the others' turn: the
        models take turns in batches, not one reload per lease, and none starves."""
        loaded = name in self._recent
        if not (loaded and turn < self._loaded_at.get(name, -1)):
            for ahead, wanted in self._queue:
                if ahead == turn:
                    break
                if wanted not in self._recent:
                    return False
        return loaded or self._make_room(name)

    def shape(self, name: str) -> tuple[int, int]:
        """(layers, heads) of model `name`, as recorded when it was last loaded (loaded now if it never was): what a
        figure's sliders need, without holding or loading a model that another visitor's turn has released."""
        name = self.canonical(name)
        if name not in self._shapes:
            with self.lease(name):
                pass
        return self._shapes[name]

    def _touch(self, name: str, lm: LoadedModel) -> LoadedModel:
        with self._lock:
            self._shapes[name] = (lm.n_layers, lm.n_heads)
            self._recent[name] = None
            self._recent.move_to_end(name)
        return lm

    def _make_room(self, name: str) -> bool:
        """Release the least recently used models no one uses until `name` fits (the lock held); False, with
        nothing released, when it cannot fit beside the ones in use."""
        need, kept, idle = self.size(name), list(self._recent), []
        for old in list(self._recent):
            if self._fits(need, kept):
                break
            if not self._uses[old] and old not in self._pinned:
                kept.remove(old)
                idle.append(old)
        if not self._fits(need, kept):
            return False
        for old in idle:
            self._recent.pop(old)
            release(old)
            self._on_release(old)
        if idle:
            gc.collect()  # their tensors go now, before the next model is loaded beside them
        return True

    def _refusal(self, name: str) -> BudgetError:
        """Why `name` is refused: the sizes, and the count when the number of models, not the bytes, is what is
        spent."""
        in_use = [old for old in self._recent if self._uses[old] or old in self._pinned]
        by_count = self.budget.max_models if len(in_use) >= (self.budget.max_models or len(in_use) + 1) else None
        return BudgetError(name, self.size(name), max(self._room(in_use), 0), {old: self.size(old) for old in in_use},
                           by_count)

    def _room(self, kept: list[str]) -> int:
        kept_bytes = sum(self.size(name) for name in kept)
        return self.budget.room(kept_bytes, sum(self.size(name) for name in self._recent) - kept_bytes)

    def _fits(self, need: int, kept: list[str]) -> bool:
        full = self.budget.max_models is not None and len(kept) >= self.budget.max_models
        return not full and need <= self._room(kept)
