"""ATV as a method: the zero-shot prompt, and per query the generator's vectors added after every block.

The generator is trained once across domains (`generator.build_generator`, `icl-lab atv train`) and reused on any
task: the one shipped for the loaded model by default, or a file given with `--atv-generator`. Building ATV on a
task learns nothing from the task's examples: it loads the generator and records, for the task's first queries,
the norm of the vector made for each block (what its tab draws). Per query, the generator reads the query's
sentence embedding and makes one vector per block; times the strength, each is added to the residual stream
after its block at the query's last token, during the prompt's prefill.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from icr_app.core.models import LoadedModel
from icr_app.core.scoring import Intervention, no_intervention
from icr_app.methods.atv import generator as generator_module
from icr_app.methods.atv.generator import Generator, GeneratorTensors, added, shipped_generator
from icr_app.methods.base import BuildContext
from icr_app.methods.state import BuiltMeta, BuiltState, StatefulMethod, axes, built_fields

SHOWN = 64  # the task's queries whose vectors a built method records for its figure


@dataclass(frozen=True)
class AtvConfig:
    generator: str | None = field(default=None, metadata={
        "help": "generator file, or a folder holding generator.safetensors (`icl-lab atv train`); default: the "
                "one shipped for the model"})
    strength: float = field(default=1.0, metadata={
        "help": "the generated vectors are added times this (1 = as trained, the paper's; 0 = zero-shot)"})


@dataclass(kw_only=True)
class AtvMeta(BuiltMeta):
    generator: dict[str, Any]  # the generator's own record (domains, settings, losses, how it was trained)
    strength: float
    queries: list[str]  # the task's queries that `norms` describes


@dataclass
class AtvState(GeneratorTensors, BuiltState):
    """The generator, and the norm of each block's vector (`norms`) for each of the task's recorded queries."""

    KIND = "atv"
    TITLE = "ATV"
    META = AtvMeta

    norms: torch.Tensor = field(metadata=axes("queries", "layers"))
    meta: AtvMeta = field(kw_only=True)
    fingerprint: str = field(kw_only=True)


class AtvMethod(StatefulMethod):
    name = "atv"
    STATE = AtvState
    state: AtvState

    def __init__(self, lm: LoadedModel, state: AtvState) -> None:
        super().__init__(lm, state)
        self.stored_parameters = state.n_stored() - state.norms.numel()
        # Copies in fresh memory: a tensor read from a file can sit unaligned, which sends the matmul down another
        # kernel and changes the last bits, so a loaded method would not answer exactly as the one saved.
        self.generator = GeneratorTensors(**{k: t.to(lm.device, copy=True)
                                             for k, t in state.generator_tensors().items()})

    def vectors(self, queries: list[str]) -> torch.Tensor:
        """(L, B, d): each block's vector for each query, before the strength."""
        with torch.no_grad():
            emb = generator_module.minilm_encoder(self.lm.device)(queries).float().to(self.lm.device)
            return self.generator.vectors(emb)

    def intervention(self, queries: list[str]) -> Intervention:
        if self.state.meta.strength == 0:
            return no_intervention()
        return added(self.lm, self.state.meta.strength * self.vectors(queries), position=-1)


def cached_generator(lm: LoadedModel, path: str | None = None) -> Generator:
    """Load a generator once per (model, path); the shipped one when no path is given."""
    return lm.memoised(("atv-generator", path or ""),
                       lambda: Generator.load_from(path or shipped_generator(lm), lm))


def build(ctx: BuildContext, config: AtvConfig) -> AtvMethod:
    """Nothing is learnt from `ctx.train`: the generator is loaded, and its vectors' norms for the task's queries
    recorded. Refused under a prompt format other than the one its domains were trained in."""
    t0 = time.perf_counter()
    lm, gen = ctx.lm, cached_generator(ctx.lm, config.generator)
    for made_on in {t["format"] for t in gen.meta.templates}:
        ctx.answering.check_format("ATV generator", made_on)
    queries = list(dict.fromkeys(ctx.train.inputs))[:SHOWN]
    meta = AtvMeta(task=ctx.train.name, **built_fields(lm, ctx.answering), build_s=0.0, seed=ctx.seed,
                   generator={**gen.meta_json(), "fingerprint": gen.fingerprint}, strength=config.strength,
                   queries=queries)
    tensors = {name: t.float() for name, t in gen.generator_tensors().items()}
    method = AtvMethod(lm, AtvState(**tensors, norms=torch.zeros(0, lm.n_layers), meta=meta,
                                    fingerprint=lm.fingerprint))
    method.state.norms = method.vectors(queries).norm(dim=-1).T.float().cpu()  # (queries, layers)
    method.state.meta.build_s = time.perf_counter() - t0
    return method


def neutral(method: AtvMethod) -> AtvMethod:
    """The same generator and record at strength 0: nothing is added."""
    state = method.state
    return AtvMethod(method.lm, replace(state, meta=replace(state.meta, strength=0.0)))
