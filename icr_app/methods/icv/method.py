"""ICV (Liu et al., 2024, "In-context Vectors"): one steering direction per layer from the demonstrations'
latent shifts, added at every layer and every position with a norm-preserving rescale.

Extraction: for each demonstration (x, y) we read the last-token output of every decoder block for two
strings, the templated query ("Input: x\\nOutput:") and the templated query with its answer
("Input: x\\nOutput: y"), and take the difference ΔH_i^l = H^l(query + answer) − H^l(query). The reference
code tokenises x and y alone, with no template; here the template is kept so that the shift is what writing
the answer does to the very prompt that the method later steers, and the two strings differ only by the
answer. Per layer, the ICV is the first principal direction of the centred {ΔH_i^l}.

Injection (the reference's `ICVLayer`): for a hidden state h and unit direction v,
h' = normalize(normalize(h) + λ·s·v)·‖h‖ with s = 1 + max(0, cos(h, −v)), so every position keeps its norm and
λ acts on unit vectors. It runs at every layer and every position of the prompt's prefill; answers are then
scored or decoded from that cache without it, as for every method here (the runner's rule), whereas the
reference also steers each generated token. fp32 throughout (the reference casts to half).

λ: chosen on a validation part of the train split from a small sweep (`strengths`), by validation accuracy,
ties broken by the mean probability of the gold label (classification) or first-token accuracy (open tasks),
then by the smaller λ. λ = 0 is no intervention at all, so it reproduces zero-shot exactly.

Decisions: PC1 alone (sign-aligned with the mean difference, the paper's) rather than the reference code's PC1 +
mean, added to the block output (the paper's) rather than the MLP branch (the code's). Measured on the built-in
sentiment task (SmolLM2-135M, seed 0, 38 test queries, λ chosen on 5 held-out examples): PC1 at blocks or at
MLPs chose λ = 0 (zero-shot, 0.53); PC1 + mean chose λ = 0.2 at blocks (0.50) and 0.1 at MLPs (0.61). The
comparison on more tasks was not run, so the paper's choice stays the default (`--icv-direction`, `--icv-site`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import torch
import torch.nn.functional as F

from icr_app.core.capture import blocks, last_token_states
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import Template
from icr_app.core.scoring import Intervention, first_token_id, no_intervention
from icr_app.core.tasks import Example, Task, sample_demos
from icr_app.core.trace import Trace, main_tensor, with_main
from icr_app.methods.base import BuildContext, is_correct
from icr_app.methods.icv.artefact import ICVMeta, ICVState
from icr_app.methods.state import StatefulMethod, built_fields

Direction = Literal["pc1", "pc1+mean"]
Site = Literal["block", "mlp"]


@dataclass(frozen=True)
class ICVConfig:
    """Demonstrations for the direction, a validation part for λ, and the sweep."""

    n_demos: int = field(default=16, metadata={
        "flag": "demos", "help": "demonstrations (class-balanced) whose latent shifts give the direction"})
    val_examples: int = field(default=32, metadata={
        "flag": "val", "help": "at most this many train examples held out to choose λ (at most half of them)"})
    strengths: list[float] = field(default_factory=lambda: [0.0, 0.02, 0.05, 0.1, 0.2], metadata={
        "help": "the λ swept on the validation part (comma-separated; 0 is zero-shot)"})
    direction: Direction = field(default="pc1", metadata={
        "help": "pc1: the first principal direction, its sign towards the mean shift; pc1+mean: the reference "
                "code's PC1 plus the mean shift"})
    site: Site = field(default="block", metadata={
        "help": "where the direction is added: every block's output (paper) or every MLP branch (code)"})


def latent_shifts(lm: LoadedModel, demos: list[Example], template: Template,
                  progress: Progress = no_progress) -> torch.Tensor:
    """(N, L, d): every block's last-token output for query + answer minus that for the query alone."""
    queries = [template.zero_shot(e.input) for e in demos]
    answered = [q + template.answer_text(e.output) for q, e in zip(queries, demos)]
    states = last_token_states(lm, queries + answered, blocks(lm), "output", progress=progress,
                               desc="ICV: latent states")
    h = torch.stack([states[layer] for layer in range(lm.n_layers)], dim=1)
    return h[len(demos):] - h[: len(demos)]


def principal_directions(shifts: torch.Tensor, direction: Direction = "pc1") -> torch.Tensor:
    """(L, d) unit vectors: per layer, the first principal direction of the centred shifts, its sign towards
    their mean; with "pc1+mean", that direction plus the mean (the reference code), normalised."""
    if shifts.shape[0] < 2:
        raise ValueError("ICV needs at least 2 demonstrations for a principal direction")
    mean = shifts.mean(0)
    _, _, vh = torch.linalg.svd((shifts - mean).transpose(0, 1), full_matrices=False)  # batched over layers
    pc1 = vh[:, 0]
    pc1 = pc1 * torch.where((pc1 * mean).sum(-1, keepdim=True) < 0, -1.0, 1.0)
    return F.normalize(pc1 if direction == "pc1" else pc1 + mean, dim=-1)


def steer(h: torch.Tensor, v: torch.Tensor, strength: float) -> torch.Tensor:
    """h (..., d) turned towards the unit vector v by `strength`, each position keeping its norm."""
    unit = F.normalize(h, dim=-1)
    push = 1 + F.relu(-(unit * v).sum(-1, keepdim=True))  # 1 + max(0, cos(h, −v)): more against the grain
    return F.normalize(unit + strength * push * v, dim=-1) * h.norm(dim=-1, keepdim=True)


def steered_modules(lm: LoadedModel, site: Site) -> dict[int, torch.nn.Module]:
    """Each layer's block (its output is the residual stream) or MLP branch (as added to the stream)."""
    return blocks(lm) if site == "block" else {layer: lm.adapter.branch(layer) for layer in range(lm.n_layers)}


@contextmanager
def inject(lm: LoadedModel, directions: torch.Tensor, strength: float, site: Site = "block",
           ) -> Iterator[dict[str, Any]]:
    """Every forward inside the block steers each steered module's output at every position (`steer`).
    Entered under `lm.lock`; the hooks are removed on exit."""
    directions = directions.to(lm.device)

    def edit(layer: int, output: Any) -> Any:
        h = main_tensor(output)
        y = steer(h.float(), directions[layer].to(h.device), strength).to(h.dtype)  # in fp32, on the layer's device
        return with_main(output, y)

    with Trace(steered_modules(lm, site), edit_output=edit):
        yield {}


class ICVMethod(StatefulMethod):
    """Zero-shot prompts steered along the ICV at every layer and position during prefill."""

    name = "icv"
    STATE = ICVState
    state: ICVState

    def __init__(self, lm: LoadedModel, state: ICVState) -> None:
        super().__init__(lm, state)
        self.stored_parameters += 1  # λ besides the directions; it is picked from a sweep, nothing is trained

    def intervention(self, queries: list[str]) -> Intervention:
        m = self.state.meta
        if m.strength == 0:
            return no_intervention()
        return inject(self.lm, self.state.directions, m.strength, m.site)  # type: ignore[arg-type]


def _holdout(train: Task, cfg: ICVConfig, seed: int) -> tuple[Task, Task]:
    """(demonstration pool, validation part): a seeded split, validation at most half the examples."""
    idx = list(range(len(train.examples)))
    random.Random(seed).shuffle(idx)
    n_val = min(cfg.val_examples, len(idx) // 2)
    if n_val < 1 or len(idx) - n_val < 2:
        raise ValueError("ICV needs at least 3 training examples (2 for the direction, 1 to choose λ)")
    return train.subset(idx[n_val:], f"{train.name}/icv-demos"), train.subset(idx[:n_val], f"{train.name}/icv-val")


def validation_score(method: ICVMethod, val: Task) -> tuple[float, float]:
    """(accuracy, tiebreak) on the validation part: the tiebreak is the mean gold-label probability
    (classification) or the first-token accuracy (open tasks)."""
    preds = method.predict(val.inputs)
    accuracy = sum(is_correct(p, y) for p, y in zip(preds, val.outputs)) / len(preds)
    if method.kind == "classification":
        tiebreak = sum((p.label_probs or {})[y] for p, y in zip(preds, val.outputs)) / len(preds)  # set: classified
    else:
        first = [first_token_id(method.lm, y, method.template) for y in val.outputs]
        tiebreak = sum(p.first_token == f for p, f in zip(preds, first)) / len(preds)
    return accuracy, tiebreak


def build(ctx: BuildContext, cfg: ICVConfig) -> ICVMethod:
    """Directions from the demonstrations, then λ from the sweep on the validation part."""
    lm, train, answering, seed, progress = ctx.lm, ctx.train, ctx.answering, ctx.seed, ctx.progress
    t0 = time.perf_counter()
    if not cfg.strengths:
        raise ValueError("ICV needs at least one strength to try")
    pool, val = _holdout(train, cfg, seed)
    demos = sample_demos(pool, cfg.n_demos, random.Random(seed))
    directions = principal_directions(latent_shifts(lm, demos, answering.template, progress), cfg.direction)
    meta = ICVMeta(
        task=train.name, **built_fields(lm, answering), strength=0.0, direction=cfg.direction, site=cfg.site,
        n_demos=len(demos), n_val=len(val.examples), sweep=[], build_s=0.0, seed=seed,
    )
    for strength in progress(cfg.strengths, desc="ICV: choosing λ"):
        trial = ICVState(directions, replace(meta, strength=float(strength)), lm.fingerprint)
        accuracy, tiebreak = validation_score(ICVMethod(lm, trial), val)
        meta.sweep.append({"strength": float(strength), "accuracy": accuracy, "tiebreak": tiebreak})
    best = max(meta.sweep, key=lambda r: (r["accuracy"], r["tiebreak"], -r["strength"]))
    meta.strength, meta.build_s = best["strength"], time.perf_counter() - t0
    return ICVMethod(lm, ICVState(directions=directions, meta=meta, fingerprint=lm.fingerprint))


def neutral(method: ICVMethod) -> ICVMethod:
    """The same directions at strength λ = 0."""
    state = method.state
    return ICVMethod(method.lm, replace(state, meta=replace(state.meta, strength=0.0)))
