"""ELICIT as a method: the zero-shot prompt, and per query the library's best entry added at its block.

The library and its retriever are built once (`library.build_library`, `icl-lab elicit build-library`) and
reused on any task: the one shipped for the loaded model by default, or a file given with `--elicit-library`.
Building ELICIT on a task learns nothing from the task's examples: it loads the library and records which entry
the retriever picks for each of the task's queries (what its tab draws). Per query, the retriever scores every
entry; when the best score reaches the threshold (the recall's), that entry's vector, times the strength, is
added to the residual stream after its block at the query's last token; below it the query runs zero-shot.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from icr_app.core.models import LoadedModel
from icr_app.core.scoring import Intervention, no_intervention
from icr_app.core.trace import Trace, main_tensor, with_main
from icr_app.methods.base import BuildContext
from icr_app.methods.elicit import library as library_module
from icr_app.methods.elicit.library import Library, LibraryTensors, shipped_library
from icr_app.methods.last_token import add_at
from icr_app.methods.state import BuiltMeta, BuiltState, StatefulMethod, axes, built_fields

SHOWN = 64  # the task's queries whose retrieval a built method records for its figure


@dataclass(frozen=True)
class ElicitConfig:
    library: str | None = field(default=None, metadata={
        "help": "library file, or a folder holding library.safetensors (`icl-lab elicit build-library`); default: "
                "the one shipped for the model"})
    strength: float = field(default=2.0, metadata={
        "help": "the retrieved vector is added times this (the paper's 2; 0 = zero-shot)"})
    recall: float = field(default=0.8, metadata={
        "help": "the threshold lets this share of held-out in-domain queries through (the paper's 0.8); a query "
                "scoring below it gets no vector"})


@dataclass(kw_only=True)
class ElicitMeta(BuiltMeta):
    library: dict[str, Any]  # the library's own record (entries, domains, settings, how it was built)
    strength: float
    recall: float
    threshold: float
    queries: list[str]  # the task's queries that `picks` and `scores` describe


@dataclass
class ElicitState(LibraryTensors, BuiltState):
    """The library and retriever, and the entry picked (`picks`) with its score for each of the task's queries."""

    KIND = "elicit"
    TITLE = "ELICIT"
    META = ElicitMeta

    picks: torch.Tensor = field(metadata=axes("queries"))
    scores: torch.Tensor = field(metadata=axes("queries"))
    meta: ElicitMeta = field(kw_only=True)
    fingerprint: str = field(kw_only=True)


class ElicitMethod(StatefulMethod):
    name = "elicit"
    STATE = ElicitState
    state: ElicitState

    def __init__(self, lm: LoadedModel, state: ElicitState) -> None:
        super().__init__(lm, state)
        self.stored_parameters = state.n_stored() - state.picks.numel() - state.scores.numel()
        self.vectors = state.vectors.to(lm.device)
        self.layers = [int(layer) for layer in state.layers]

    def retrieve(self, queries: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """The best entry (B,) for each query and its score (B,)."""
        with torch.no_grad():
            scores = self.state.entry_scores(library_module.minilm_encoder(self.lm.device)(queries).float())
        best, pick = scores.max(-1)
        return pick.cpu(), best.cpu()  # the state keeps them, and saves them, on the CPU

    def intervention(self, queries: list[str]) -> Intervention:
        if self.state.meta.strength == 0:
            return no_intervention()
        pick, score = self.retrieve(queries)
        deltas: dict[int, torch.Tensor] = {}
        for row, (entry, s) in enumerate(zip(pick.tolist(), score.tolist())):
            if s >= self.state.meta.threshold:
                layer = self.layers[entry]
                deltas.setdefault(layer, torch.zeros(len(queries), self.vectors.shape[1], device=self.lm.device))
                deltas[layer][row] = self.state.meta.strength * self.vectors[entry]
        return added_at_last(self.lm, deltas) if deltas else no_intervention()


@contextmanager
def added_at_last(lm: LoadedModel, deltas: dict[int, torch.Tensor]) -> Iterator[dict[str, Any]]:
    """An intervention: after each block in `deltas`, row b's last-token state gets deltas[block][b] (d,) added
    (left-padded batches: the last position is every row's last real token)."""

    def add(layer: int, out: Any) -> Any:
        return with_main(out, add_at(main_tensor(out), deltas[layer][:, None]))  # (B, 1, d): one vector per row

    with Trace({layer: lm.adapter.blocks[layer] for layer in deltas}, edit_output=add):
        yield {}


def cached_library(lm: LoadedModel, path: str | None = None) -> Library:
    """Load a library once per (model, path); the shipped one when no path is given."""
    return lm.memoised(("elicit-library", path or ""), lambda: Library.load(path or shipped_library(lm), lm))


def build(ctx: BuildContext, config: ElicitConfig) -> ElicitMethod:
    """Nothing is learnt from `ctx.train`: the library is loaded, and its picks for the task's queries recorded.
    Refused under a prompt format other than the library's entries' (those from before it was recorded: plain)."""
    t0 = time.perf_counter()
    lm, library = ctx.lm, cached_library(ctx.lm, config.library)
    templates = library.info.get("templates") or [library.info.get("template") or {}]  # older files: one, or none
    for made_on in {t.get("format", "plain") for t in templates}:
        ctx.answering.check_format("ELICIT library", made_on)
    threshold = library.threshold(config.recall)
    queries = list(dict.fromkeys(ctx.train.inputs))[:SHOWN]
    meta = ElicitMeta(task=ctx.train.name, **built_fields(lm, ctx.answering), build_s=0.0, seed=ctx.seed,
                      library=library.info, strength=config.strength, recall=config.recall, threshold=threshold,
                      queries=queries)
    empty = torch.zeros(0)
    tensors = {name: t.float() for name, t in library.library_tensors().items()}  # fp32, as every built state
    method = ElicitMethod(lm, ElicitState(**tensors, picks=empty, scores=empty, meta=meta, fingerprint=lm.fingerprint))
    pick, score = method.retrieve(queries)
    method.state.picks, method.state.scores = pick.float(), score
    method.state.meta.build_s = time.perf_counter() - t0
    return method


def neutral(method: ElicitMethod) -> ElicitMethod:
    """The same library and picks at strength 0: no vector is added."""
    state = method.state
    return ElicitMethod(method.lm, replace(state, meta=replace(state.meta, strength=0.0)))
