"""ICL as a rank-1 weight update (DESIGN.md §4; Dherin et al., arXiv 2507.16003), checked in a real model.

The identity checked, for each decoder block l of a pre-norm SwiGLU model (Llama-style). Two prompts in the
same template: the with-context prompt C (demonstrations + query) and the context-free prompt (the query
alone). At the query's last token (the same token in both prompts) we capture, per block:

    r = post-attention residual = block input + attention output   (input of the norm before the MLP)
    a = MLP input = norm(r)                                          (input of gate_proj and up_proj)
    y = block output = r + down(act(W_g a) * (W_u a))                (Gemma-3 norms the MLP output first)

with subscript C for the with-context run and 0 for the context-free run. For W in {W_g, W_u}:

    ΔW = (W (a_C − a_0)) a_0ᵀ / |a_0|²,  so (W + ΔW) a_0 = W a_C exactly, and the MLP output matches;
    Δh = r_C − r_0,                      the residual stream's move at the query (input shift + attention shift).

A pre-norm block's residual path bypasses the MLP, so ΔW alone cannot reproduce y_C: Δh, added to the block
output at the query (a bias patch), carries the rest. Then r_0 + Δh + MLP_{W+ΔW}(a_0) = r_C + MLP_W(a_C) = y_C.

`patched_output` re-runs the actual block module on its recorded context-free input (whole sequence, same mask
and rotary embeddings) with the weights W + ΔW swapped in (`torch.func.functional_call`, so the shared model is
never written) and adds Δh at the query; its distance to y_C is what fp32 arithmetic leaves, not an algebraic
restatement.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any, Literal

import torch
from torch.func import functional_call

from icr_app.hooks import hooks
from icr_app.methods import Progress, no_progress
from icr_app.models import LoadedModel, wrap
from icr_app.prompts import Template, sample_demos
from icr_app.scoring import encode
from icr_app.tasks import Example, Task

N_SINGULAR = 8
"""How many leading singular values of ΔW to keep: enough to see the drop after the first."""

Proj = Literal["gate", "up"]


@dataclass
class BlockStates:
    """Every block's r, a and y (see the module docstring) at the prompt's last token, each (L, d), and
    what each block was called with, so one block can be re-run alone with patched weights."""

    resid: torch.Tensor
    mlp_in: torch.Tensor
    out: torch.Tensor
    last_token: int
    inputs: list[torch.Tensor]  # each block's full-sequence input, (1, T, d)
    call_kwargs: list[dict[str, Any]]  # each block's keyword arguments: mask, rotary embeddings, positions


@contextmanager
def _record_calls(layers: torch.nn.ModuleList, inputs: list[torch.Tensor],
                  kwargs: list[dict[str, Any]]) -> Iterator[None]:
    """Record each block's hidden-state input and keyword arguments (per block: Gemma-3 alternates sliding and
    global attention, so masks and rotary embeddings differ between blocks)."""

    def record(i: int):
        def fn(_module, args, kw):
            inputs[i], kwargs[i] = args[0], kw
        return fn

    handles = [layer.register_forward_pre_hook(record(i), with_kwargs=True) for i, layer in enumerate(layers)]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


def _mlp_norm(layer: torch.nn.Module) -> torch.nn.Module:
    """The norm in front of the MLP, whose input is r: Llama's post_attention_layernorm, while Gemma-3 uses
    that name for a norm on the attention output and has pre_feedforward_layernorm in front of the MLP."""
    gemma = hasattr(layer, "pre_feedforward_layernorm")
    return layer.pre_feedforward_layernorm if gemma else layer.post_attention_layernorm


@torch.no_grad()
def block_states(lm: LoadedModel, prompt: str) -> BlockStates:
    """One forward pass of `prompt`, capturing r, a and y of every block at its last token."""
    n = lm.n_layers
    resid: list[torch.Tensor] = [torch.empty(0)] * n
    mlp_in: list[torch.Tensor] = [torch.empty(0)] * n
    out: list[torch.Tensor] = [torch.empty(0)] * n
    inputs: list[torch.Tensor] = [torch.empty(0)] * n
    call_kwargs: list[dict[str, Any]] = [{}] * n

    def grab_input(store: list[torch.Tensor], i: int):
        def fn(_module, args):
            store[i] = args[0][0, -1].clone()
        return fn

    def grab_output(i: int):
        def fn(_module, _args, output):
            out[i] = output[0, -1].clone()
        return fn

    pre = [(_mlp_norm(layer), grab_input(resid, i)) for i, layer in enumerate(lm.layers)]
    pre += [(layer.mlp, grab_input(mlp_in, i)) for i, layer in enumerate(lm.layers)]
    post = [(layer, grab_output(i)) for i, layer in enumerate(lm.layers)]
    enc = encode(lm, [prompt])
    with lm.lock, hooks(pre=pre, post=post), _record_calls(lm.layers, inputs, call_kwargs):
        # No KV cache: a recorded cache would grow each time a block is re-run on the recorded kwargs.
        lm.model(input_ids=enc.input_ids, attention_mask=enc.attention_mask, use_cache=False, logits_to_keep=1)
    return BlockStates(torch.stack(resid), torch.stack(mlp_in), torch.stack(out), int(enc.input_ids[0, -1]),
                       inputs, call_kwargs)


@dataclass
class Rank1Patch:
    """The patch of one block, kept as factors: ΔW = u a₀ᵀ / |a₀|² is materialised only when applied."""

    layer: int
    a0: torch.Tensor  # context-free MLP input at the query, (d,)
    u: dict[str, torch.Tensor]  # W (a_C − a_0) per projection, (I,)
    dh: torch.Tensor  # residual patch Δh = r_C − r_0, (d,)

    def delta(self, proj: Proj) -> torch.Tensor:
        return torch.outer(self.u[proj], self.a0) / self.a0.dot(self.a0)

    def norm(self, proj: Proj) -> float:
        """Frobenius norm of ΔW; for a rank-1 outer product it is |u| |a₀| / |a₀|² = |u| / |a₀|."""
        return float(self.u[proj].norm() / self.a0.norm())


def _weights(lm: LoadedModel, layer: int) -> dict[str, torch.Tensor]:
    mlp = lm.layers[layer].mlp
    return {"gate": mlp.gate_proj.weight, "up": mlp.up_proj.weight}


def make_patch(lm: LoadedModel, layer: int, ctx: BlockStates, free: BlockStates) -> Rank1Patch:
    """ΔW for gate_proj and up_proj and Δh of `layer`, from the with-context and context-free states."""
    a, a0 = ctx.mlp_in[layer], free.mlp_in[layer]
    u = {proj: w @ (a - a0) for proj, w in _weights(lm, layer).items()}
    return Rank1Patch(layer, a0, u, ctx.resid[layer] - free.resid[layer])


@torch.no_grad()
def patched_output(lm: LoadedModel, free: BlockStates, patch: Rank1Patch) -> torch.Tensor:
    """Block `patch.layer` re-run alone on its recorded context-free input with W + ΔW, plus Δh at the last
    token, (d,). The weights are swapped only inside the call (`functional_call`), never written."""
    layer = patch.layer
    params = {f"mlp.{proj}_proj.weight": w + patch.delta(proj) for proj, w in _weights(lm, layer).items()}
    with lm.lock:
        output = functional_call(lm.layers[layer], params, (free.inputs[layer],), free.call_kwargs[layer])
    return output[0, -1] + patch.dh


def _max_abs(x: torch.Tensor) -> float:
    return float(x.abs().max())


def _max_ulps(err: torch.Tensor, ref: torch.Tensor) -> float:
    """Max error in units in the last place of max |ref|, the output's scale: the float format's floor is
    about 1 (per-entry ulps would blow up on entries that happen to be near 0), and above 1024 one fp32 ulp
    is already 1.2e-4."""
    scale = ref.abs().max()
    return float(err.abs().max() / (torch.nextafter(scale, scale + 1) - scale))


def as_dtype(lm: LoadedModel, dtype: torch.dtype) -> LoadedModel:
    """A private copy of the model in `dtype` (float64 shows the identity is exact up to rounding)."""
    if lm.model.dtype == dtype:
        return lm
    return wrap(f"{lm.name}:{str(dtype).removeprefix('torch.')}", copy.deepcopy(lm.model).to(dtype), lm.tokenizer)


@dataclass
class DemoSweep:
    """Norms as demonstrations are appended one by one; each `*_norm` is [k][i] for k demos, layer layers[i]."""

    n_demos: list[int]
    gate_norm: list[list[float]]
    up_norm: list[list[float]]
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
    """Everything the rank-1 view shows; per-layer lists are indexed like `layers`."""

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
    sigma_gate: list[list[float]]  # leading singular values of ΔW_gate
    sigma_up: list[list[float]]
    sweep: DemoSweep
    transfer: Transfer

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


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


def _svals(patch: Rank1Patch, proj: Proj) -> list[float]:
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
    gate, up, dh = [], [], []
    for k in progress(ks):
        ctx, free = query_states(lm, setup, setup.query, k)
        patches = [make_patch(lm, li, ctx, free) for li in layers]
        gate.append([p.norm("gate") for p in patches])
        up.append([p.norm("up") for p in patches])
        dh.append([float(p.dh.norm()) for p in patches])
    return DemoSweep(ks, gate, up, dh)


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
    layers = list(range(lm.n_layers)) if layer is None else [layer]
    setup = Rank1Setup(task, template or Template(), shots, n_transfer, seed)
    ctx, free = query_states(lm, setup, setup.query)
    patches: dict[int, Rank1Patch] = {}
    errors, ulps, sig_g, sig_u = [], [], [], []
    for li in progress(layers):
        patches[li] = make_patch(lm, li, ctx, free)
        err = patched_output(lm, free, patches[li]) - ctx.out[li]
        errors.append(_max_abs(err))
        ulps.append(_max_ulps(err, ctx.out[li]))
        sig_g.append(_svals(patches[li], "gate"))
        sig_u.append(_svals(patches[li], "up"))
    return Rank1Report(
        task=task.name, model=lm.name, fingerprint=lm.fingerprint, query=setup.query,
        shots=len(setup.demos), seed=seed, layers=layers, max_abs_error=errors, max_ulp_error=ulps,
        output_scale=[_max_abs(ctx.out[li]) for li in layers],
        unpatched_error=[_max_abs(free.out[li] - ctx.out[li]) for li in layers],
        sigma_gate=sig_g, sigma_up=sig_u,
        sweep=_sweep(lm, setup, layers, progress),
        transfer=_transfer(lm, setup, layers, patches, progress),
    )


def summary_table(report: Rank1Report) -> str:
    """One row per checked layer: the identity, the gap it closes, rank 1, and transfer."""
    tr = report.transfer
    head = (f"{'layer':>5} {'max|err|':>9} {'ulp':>5} {'max|y_C|':>9} {'no patch':>9} {'s2/s1 gate':>10} "
            f"{'s2/s1 up':>9} {'own x2':>9} {'moved x2':>9} {'none x2':>9}")
    lines = [f"task={report.task} model={report.model} shots={report.shots} seed={report.seed}",
             f"query={report.query!r}", head, "-" * len(head)]
    for i, layer in enumerate(report.layers):
        g, u = report.sigma_gate[i], report.sigma_up[i]
        lines.append(
            f"{layer:>5} {report.max_abs_error[i]:>9.2e} {report.max_ulp_error[i]:>5.1f} "
            f"{report.output_scale[i]:>9.1f} {report.unpatched_error[i]:>9.2e} {g[1] / g[0]:>10.1e} "
            f"{u[1] / u[0]:>9.1e} {tr.own_error[i]:>9.2e} {tr.transfer_error[i]:>9.2e} {tr.unpatched_error[i]:>9.2e}"
        )
    lines.append(f"max over layers: {max(report.max_abs_error):.2e} "
                 f"({max(report.max_ulp_error):.1f} ulp); x2 = mean over {len(tr.queries)} other queries")
    return "\n".join(lines)
