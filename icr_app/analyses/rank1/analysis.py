"""ICL as a rank-1 weight update (this folder's README.md; Dherin et al., arXiv 2507.16003), checked in a real model.

The identity checked, for each decoder block l. Two prompts in the same template: the with-context prompt C
(demonstrations + query) and the context-free prompt (the query alone). At the query's last token (the same
token in both prompts) we capture, per block:

    y = block output
    a = MLP input                                   (input of its first matrices: gate and up, or fc)
    r = y − branch                                  the residual stream the MLP branch is added to

where `branch` is the MLP branch exactly as the block adds it (`Adapter.branch`: the MLP's output, or its
normed output in Gemma-3 and OLMo-2). In a pre-norm block r is the post-attention residual; in GPT-NeoX's
parallel block it is the block input plus the attention output. With subscript C for the with-context run and
0 for the context-free run, for each first matrix W:

    ΔW = (W (a_C − a_0)) a_0ᵀ / |a_0|²,  so (W + ΔW) a_0 = W a_C exactly, and the MLP branch matches;
    Δh = r_C − r_0,                      the residual stream's move at the query.

The residual path bypasses the MLP, so ΔW alone cannot reproduce y_C: Δh, added to the block output at the
query (a bias patch), carries the rest. Then r_0 + Δh + branch_{W+ΔW}(a_0) = r_C + branch_W(a_C) = y_C.

`patched_output` re-runs the actual block module on its recorded context-free call (whole sequence, same mask
and rotary embeddings) with the weights W + ΔW swapped in (`torch.func.functional_call`, so the shared model is
never written) and adds Δh at the query; its distance to y_C is what the arithmetic leaves, not an algebraic
restatement.
"""

from __future__ import annotations

import copy
import random
from dataclasses import asdict, dataclass, fields
from typing import Any

import torch
from accelerate.utils.modeling import get_state_dict_offloaded_model
from torch.func import functional_call
from transformers import AutoModelForCausalLM

from icr_app.core.loading import dtype_name
from icr_app.core.models import LoadedModel, owned, wrap
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import Template
from icr_app.core.scoring import encode
from icr_app.core.tasks import Example, Task, sample_demos
from icr_app.core.trace import Trace, main_tensor

N_SINGULAR = 8
"""How many leading singular values of ΔW to keep: enough to see the drop after the first."""


@dataclass
class BlockStates:
    """Every block's r, a and y (see the module docstring) at the prompt's last token, each (L, d), and
    how each block was called, so one block can be re-run alone with patched weights."""

    resid: torch.Tensor
    mlp_in: torch.Tensor
    out: torch.Tensor
    last_token: int
    args: list[tuple]  # each block's positional arguments, the full-sequence hidden states first
    call_kwargs: list[dict[str, Any]]  # each block's keyword arguments: mask, rotary embeddings, positions


@torch.no_grad()
def block_states(lm: LoadedModel, prompt: str) -> BlockStates:
    """One forward pass of `prompt`, capturing r, a and y of every block at its last token."""
    ad = lm.adapter
    layers = range(lm.n_layers)
    blocks = Trace({i: ad.blocks[i] for i in layers}, retain_input=True, retain_kwargs=True, retain_output=True)
    mlps = Trace({i: ad.mlp(i) for i in layers}, retain_input=True)
    branches = Trace({i: ad.branch(i) for i in layers}, retain_output=True)
    enc = encode(lm, [prompt])
    with lm.lock, blocks, mlps, branches:
        # No KV cache: a recorded cache would grow each time a block is re-run on the recorded kwargs.
        lm.model(input_ids=enc.input_ids, attention_mask=enc.attention_mask, use_cache=False, logits_to_keep=1)
    out = torch.stack([main_tensor(blocks[i].output)[0, -1] for i in layers])
    branch = torch.stack([main_tensor(branches[i].output)[0, -1] for i in layers])
    return BlockStates(out - branch, torch.stack([mlps[i].hidden_in[0, -1] for i in layers]), out,
                       int(enc.input_ids[0, -1]), [blocks[i].args for i in layers], [blocks[i].kwargs for i in layers])


@dataclass
class Rank1Patch:
    """The patch of one block, kept as factors: ΔW = u a₀ᵀ / |a₀|² is materialised only when applied."""

    layer: int
    a0: torch.Tensor  # context-free MLP input at the query, (d,)
    u: dict[str, torch.Tensor]  # W (a_C − a_0) per first matrix ("gate", "up" or "fc"), (I,)
    dh: torch.Tensor  # residual patch Δh = r_C − r_0, (d,)

    def delta(self, proj: str) -> torch.Tensor:
        return torch.outer(self.u[proj], self.a0) / self.a0.dot(self.a0)

    def norm(self, proj: str) -> float:
        """Frobenius norm of ΔW; for a rank-1 outer product it is |u| |a₀| / |a₀|² = |u| / |a₀|."""
        return float(self.u[proj].norm() / self.a0.norm())


def make_patch(lm: LoadedModel, layer: int, ctx: BlockStates, free: BlockStates) -> Rank1Patch:
    """ΔW for each of the MLP's first matrices and Δh of `layer`, from the with-context and context-free states."""
    a, a0 = ctx.mlp_in[layer], free.mlp_in[layer]
    block = lm.layers[layer]
    u = {p.name: p.matrix(block) @ (a - a0) for p in lm.adapter.projections}
    return Rank1Patch(layer, a0, u, ctx.resid[layer] - free.resid[layer])


@torch.no_grad()
def patched_output(lm: LoadedModel, free: BlockStates, patch: Rank1Patch) -> torch.Tensor:
    """Block `patch.layer` re-run alone on its recorded context-free call with W + ΔW, plus Δh at the last
    token, (d,). The weights are swapped only inside the call (`functional_call`), never written."""
    layer = patch.layer
    params = lm.adapter.patched_weights(layer, {name: patch.delta(name) for name in patch.u})
    with lm.lock:
        output = functional_call(lm.layers[layer], params, free.args[layer], free.call_kwargs[layer])
    return main_tensor(output)[0, -1] + patch.dh


def _max_abs(x: torch.Tensor) -> float:
    return float(x.abs().max())


def _max_ulps(err: torch.Tensor, ref: torch.Tensor) -> float:
    """Max error in units in the last place of max |ref|, the output's scale: the float format's floor is
    about 1 (per-entry ulps would blow up on entries that happen to be near 0), and above 1024 one fp32 ulp
    is already 1.2e-4."""
    scale = ref.abs().max()
    return float(err.abs().max() / (torch.nextafter(scale, scale + 1) - scale))


def as_dtype(lm: LoadedModel, dtype: torch.dtype) -> LoadedModel:
    """The model in `dtype` whole on one device: itself when it already is, else a private copy (float64 shows the
    identity is exact up to rounding; a bf16 model is checked on an fp32 copy). A model that accelerate spreads
    over devices or offloads to disk keeps some weights off-device outside its forward pass, so the copy is
    gathered from it onto the CPU."""
    dispatched = hasattr(lm.model, "_hf_hook")
    if lm.model.dtype == dtype and not dispatched:
        return lm
    if dispatched:
        model = AutoModelForCausalLM.from_config(lm.model.config, dtype=dtype)
        model.load_state_dict(get_state_dict_offloaded_model(lm.model))
    else:
        model = copy.deepcopy(lm.model)
        module: torch.nn.Module = model  # typeshed reads transformers' wrapped `to` unbound; it casts in place
        module.to(dtype)
    return wrap(owned(model), lm.tokenizer, f"{lm.name}:{dtype_name(dtype)}")


@dataclass
class DemoSweep:
    """Norms as demonstrations are appended one by one; each list is [k][i] for k demos, layer layers[i]."""

    n_demos: list[int]
    delta_norm: dict[str, list[list[float]]]  # |ΔW| per first matrix
    dh_norm: list[list[float]]


@dataclass
class Transfer:
    """Per layer, mean over the other queries x' of the max abs error against x'’s with-context output."""

    queries: list[str]
    own_error: list[float]  # x'’s own patch: the identity again
    transfer_error: list[float]  # the patch computed for the main query, applied to x'
    unpatched_error: list[float]  # no patch: how far context-free is from with-context


@dataclass
class Rank1Report:
    """Everything the rank-1 analysis reports; per-layer lists are indexed like `layers`."""

    task: str
    model: str
    fingerprint: str
    query: str
    shots: int
    seed: int
    layers: list[int]
    max_abs_error: list[float]  # the identity: max |patched block output − y_C|
    max_ulp_error: list[float]  # the same error in units in the last place of max |y_C|
    output_scale: list[float]  # max |y_C|, to read the error against
    unpatched_error: list[float]  # max |y_0 − y_C|: the gap the patch closes
    sigma: dict[str, list[list[float]]]  # leading singular values of ΔW per first matrix, [i] for layers[i]
    sweep: DemoSweep
    transfer: Transfer

    @property
    def sigma_ratio(self) -> dict[str, list[float | None]]:
        """σ₂/σ₁ of each ΔW per checked layer; None where ΔW is zero (see `no_update_layers`)."""
        return {name: [s[1] / s[0] if s[0] else None for s in rows] for name, rows in self.sigma.items()}

    @property
    def no_update_layers(self) -> list[int]:
        """Checked layers where every ΔW is zero: the context leaves the MLP's input at the query unchanged, so
        there is no update whose rank could be read. GPT-NeoX's parallel block feeds its MLP the block's input,
        which at the first layer is the query token's embedding alone, the same with and without context."""
        return [layer for i, layer in enumerate(self.layers) if all(rows[i][0] == 0 for rows in self.sigma.values())]

    def to_json(self) -> dict[str, Any]:
        """The fields, plus the derived `sigma_ratio` (null where ΔW is zero) and `no_update_layers`."""
        return {**asdict(self), "sigma_ratio": self.sigma_ratio, "no_update_layers": self.no_update_layers}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Rank1Report:
        kept = {f.name: data[f.name] for f in fields(cls)}  # the derived keys are recomputed, not read
        return cls(**{**kept, "sweep": DemoSweep(**data["sweep"]), "transfer": Transfer(**data["transfer"])})


class Rank1Setup:
    """Query, demonstrations and transfer queries drawn once, seeded, with the prompts built from them."""

    def __init__(self, task: Task, template: Template, shots: int, n_transfer: int, seed: int) -> None:
        idx = list(range(len(task.examples)))
        random.Random(seed).shuffle(idx)
        seen: dict[str, Example] = {}
        for i in idx:  # distinct inputs, so no query is its own demonstration
            seen.setdefault(task.examples[i].input, task.examples[i])
        distinct = list(seen.values())
        if len(distinct) < 2 + n_transfer:
            raise ValueError(f"{task.name}: need at least {2 + n_transfer} distinct inputs, got {len(distinct)}")
        self.query = distinct[0].input
        self.others = [e.input for e in distinct[1: 1 + n_transfer]]
        pool = Task(task.name, tuple(distinct[1 + n_transfer:]), task.kind)
        self.demos = sample_demos(pool, shots, random.Random(seed))
        self.template = template

    def with_context(self, x: str, k: int | None = None) -> str:
        return self.template.few_shot(self.demos[:k], x)

    def context_free(self, x: str) -> str:
        return self.template.zero_shot(x)


def query_states(lm: LoadedModel, setup: Rank1Setup, x: str, k: int | None = None) -> tuple[BlockStates, BlockStates]:
    """(with-context, context-free) states of query x; refuses prompts whose last tokens differ."""
    ctx, free = block_states(lm, setup.with_context(x, k)), block_states(lm, setup.context_free(x))
    if ctx.last_token != free.last_token:
        raise ValueError("the query's last token differs with and without demonstrations; adjust the template")
    return ctx, free


def _svals(patch: Rank1Patch, proj: str) -> list[float]:
    """Leading singular values of the materialised fp32 ΔW, computed in fp64 so tiny ones are resolved."""
    return torch.linalg.svdvals(patch.delta(proj).double())[:N_SINGULAR].tolist()


def _transfer(lm: LoadedModel, setup: Rank1Setup, layers: list[int], patches: dict[int, Rank1Patch],
              progress: Progress) -> Transfer:
    own: list[list[float]] = []
    moved: list[list[float]] = []
    plain: list[list[float]] = []
    for x in progress(setup.others):
        ctx, free = query_states(lm, setup, x)
        own.append([_max_abs(patched_output(lm, free, make_patch(lm, li, ctx, free)) - ctx.out[li])
                    for li in layers])
        moved.append([_max_abs(patched_output(lm, free, patches[li]) - ctx.out[li]) for li in layers])
        plain.append([_max_abs(free.out[li] - ctx.out[li]) for li in layers])

    def mean(rows: list[list[float]]) -> list[float]:
        return torch.tensor(rows).mean(0).tolist()

    return Transfer(setup.others, mean(own), mean(moved), mean(plain))


def _sweep(lm: LoadedModel, setup: Rank1Setup, layers: list[int], progress: Progress) -> DemoSweep:
    ks = list(range(len(setup.demos) + 1))
    names = [p.name for p in lm.adapter.projections]
    norms: dict[str, list[list[float]]] = {name: [] for name in names}
    dh = []
    for k in progress(ks):
        ctx, free = query_states(lm, setup, setup.query, k)
        patches = [make_patch(lm, li, ctx, free) for li in layers]
        for name in names:
            norms[name].append([p.norm(name) for p in patches])
        dh.append([float(p.dh.norm()) for p in patches])
    return DemoSweep(ks, norms, dh)


def rank1_analysis(
    lm: LoadedModel,
    task: Task,
    layer: int | None = None,
    shots: int = 5,
    n_transfer: int = 3,
    seed: int = 0,
    template: Template | None = None,
    progress: Progress = no_progress,
) -> Rank1Report:
    """Check the identity at `layer` (every layer when None), sweep the demos, and test transfer."""
    if layer is not None and not 0 <= layer < lm.n_layers:
        raise ValueError(f"layer {layer} is out of range: the model has layers 0..{lm.n_layers - 1}")
    if shots < 1:
        raise ValueError("shots must be at least 1: with no demonstrations there is no context to fold in")
    if n_transfer < 1:
        raise ValueError("n_transfer must be at least 1: the transfer check needs another query")
    # The identity holds to ~1e-5 in fp32 and to rounding in fp64; a half-precision model is checked in fp32.
    lm = as_dtype(lm, lm.dtype if lm.dtype in (torch.float32, torch.float64) else torch.float32)
    layers = list(range(lm.n_layers)) if layer is None else [layer]
    setup = Rank1Setup(task, template or Template(), shots, n_transfer, seed)
    ctx, free = query_states(lm, setup, setup.query)
    patches: dict[int, Rank1Patch] = {}
    errors, ulps = [], []
    sigma: dict[str, list[list[float]]] = {p.name: [] for p in lm.adapter.projections}
    for li in progress(layers):
        patches[li] = make_patch(lm, li, ctx, free)
        err = patched_output(lm, free, patches[li]) - ctx.out[li]
        errors.append(_max_abs(err))
        ulps.append(_max_ulps(err, ctx.out[li]))
        for name in sigma:
            sigma[name].append(_svals(patches[li], name))
    return Rank1Report(
        task=task.name, model=lm.name, fingerprint=lm.fingerprint, query=setup.query,
        shots=len(setup.demos), seed=seed, layers=layers, max_abs_error=errors, max_ulp_error=ulps,
        output_scale=[_max_abs(ctx.out[li]) for li in layers],
        unpatched_error=[_max_abs(free.out[li] - ctx.out[li]) for li in layers],
        sigma=sigma,
        sweep=_sweep(lm, setup, layers, progress),
        transfer=_transfer(lm, setup, layers, patches, progress),
    )


def summary_table(report: Rank1Report) -> str:
    """One row per checked layer: the identity, the gap it closes, rank 1, and transfer."""
    tr = report.transfer
    names = list(report.sigma)
    ratio = report.sigma_ratio
    head = (f"{'layer':>5} {'max|err|':>9} {'ulp':>5} {'max|y_C|':>9} {'no patch':>9} "
            + " ".join(f"{'s2/s1 ' + n:>10}" for n in names) + f" {'own x2':>9} {'moved x2':>9} {'none x2':>9}")
    lines = [f"task={report.task} model={report.model} shots={report.shots} seed={report.seed}",
             f"query={report.query!r}", head, "-" * len(head)]
    for i, layer in enumerate(report.layers):
        ratios = " ".join("-".rjust(10) if ratio[n][i] is None else f"{ratio[n][i]:>10.1e}" for n in names)
        lines.append(
            f"{layer:>5} {report.max_abs_error[i]:>9.2e} {report.max_ulp_error[i]:>5.1f} "
            f"{report.output_scale[i]:>9.1f} {report.unpatched_error[i]:>9.2e} {ratios} "
            f"{tr.own_error[i]:>9.2e} {tr.transfer_error[i]:>9.2e} {tr.unpatched_error[i]:>9.2e}"
        )
    lines.append(f"max over layers: {max(report.max_abs_error):.2e} "
                 f"({max(report.max_ulp_error):.1f} ulp); x2 = mean over {len(tr.queries)} other queries")
    if report.no_update_layers:
        lines.append(f"s2/s1 '-': no update at layer {', '.join(map(str, report.no_update_layers))} (ΔW = 0: the "
                     "context leaves the MLP's input at the query unchanged there)")
    return "\n".join(lines)

