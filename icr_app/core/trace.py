"""Scoped hooks on a shared model: record or edit what chosen modules receive and return.

A `Trace` is keyed by anything (a layer index, `(layer, "q")`, ...) and maps each key to a module. While the
block is active every forward call of those modules is recorded and, if asked, edited; on exit every hook is
removed, exceptions included, so a cancelled job never leaves the model changed. The runner of a forward
pass (scoring, generation, an analysis) holds `LoadedModel.lock` around the whole block, so concurrent
requests never see each other's hooks.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn


@dataclass
class Record:
    """What one traced module saw in the latest forward call."""

    input: torch.Tensor | None = None  # the first positional argument (the hidden states)
    args: tuple = ()  # every positional argument, the edited input first (to call the module again)
    kwargs: dict[str, Any] = field(default_factory=dict)
    output: Any = None

    @property
    def hidden_in(self) -> torch.Tensor:
        """`input`, which a trace made with `retain_input` holds once the module has run."""
        if self.input is None:
            raise RuntimeError("no input retained: the trace keeps inputs with retain_input, once the module runs")
        return self.input


class StopForward(Exception):
    """Raised by a `Trace(stop=True)` once every traced module has run; the Trace swallows it."""


def main_tensor(output: Any) -> torch.Tensor:
    """The hidden states in a module's output: the output itself, or its first element (attention modules)."""
    return output[0] if isinstance(output, tuple) else output


def with_main(output: Any, x: torch.Tensor) -> Any:
    """A module's output with its hidden states (the output itself, or its first element) replaced by x."""
    return (x, *output[1:]) if isinstance(output, tuple) else x


class Trace:
    """Hooks on `targets` for the duration of a `with` block.

    retain_input / retain_output / retain_kwargs: keep the latest value in `trace[key]`.
    edit_input(key, x) -> x': replace the first positional argument before the module runs.
    edit_output(key, output) -> output': replace what the module returns.
    stop: end the forward pass (raise `StopForward`, caught on exit) once every target has produced an output,
    when the rest of the model is not needed.
    """

    def __init__(
        self,
        targets: Mapping[Any, nn.Module],  # any hashable key: Mapping's key type admits no narrower one
        *,
        retain_input: bool = False,
        retain_output: bool = False,
        retain_kwargs: bool = False,
        edit_input: Callable[[Any, torch.Tensor], torch.Tensor] | None = None,
        edit_output: Callable[[Any, Any], Any] | None = None,
        stop: bool = False,
    ) -> None:
        self.targets = dict(targets)
        self.retain_input, self.retain_output, self.retain_kwargs = retain_input, retain_output, retain_kwargs
        self.edit_input, self.edit_output, self.stop = edit_input, edit_output, stop
        self.records: dict[Any, Record] = {key: Record() for key in self.targets}
        self._handles: list[torch.utils.hooks.RemovableHandle] = []
        self._done: set[Any] = set()

    def __getitem__(self, key: Hashable) -> Record:
        return self.records[key]

    def _pre(self, key: Hashable) -> Callable:
        def hook(_module: nn.Module, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
            if self.retain_kwargs:
                self.records[key].kwargs = kwargs
            if not args:
                return None
            x = args[0]
            if self.edit_input is not None:
                x = self.edit_input(key, x)
            args = (x, *args[1:])
            if self.retain_input:
                self.records[key].input, self.records[key].args = x, args
            return args, kwargs

        return hook

    def _post(self, key: Hashable) -> Callable:
        def hook(_module: nn.Module, _args: tuple, _kwargs: dict, output: Any) -> Any:
            if self.edit_output is not None:
                output = self.edit_output(key, output)
            if self.retain_output:
                self.records[key].output = output
            self._done.add(key)
            if self.stop and len(self._done) == len(self.targets):
                raise StopForward
            return output

        return hook

    def __enter__(self) -> Trace:
        try:
            for key, module in self.targets.items():
                self._handles.append(module.register_forward_pre_hook(self._pre(key), with_kwargs=True))
                self._handles.append(module.register_forward_hook(self._post(key), with_kwargs=True))
        except BaseException:
            self._remove()
            raise
        return self

    def _remove(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def __exit__(self, exc_type: type | None, exc: BaseException | None, tb: object) -> bool:
        self._remove()
        return exc_type is StopForward
