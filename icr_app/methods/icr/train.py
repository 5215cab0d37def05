"""Training the ICR router once on a mix of domains (icr_app/methods/icr/README.md), with resumable checkpoints.

Only the router trains; the LLM and the encoder are frozen (a model the user wrapped keeps its parameters'
`requires_grad`, so each training pass runs under `core.grads.frozen` and no gradient reaches them). Per example
(a ZERO-shot prompt of an in-domain task), the loss is

    CE(first answer token) + λ_conf·ReLU(H(p_ICR) − H(p_zs)) + λ_spar·mean_l(w_l·|α_l|₁/r) + λ_gate·mean_l(|γ_l|₁/H)

with entropies over the full vocabulary at the answer position, w_l rising linearly over the routed layers
from 1 to `depth_weight_max`, and the α scale annealed linearly from `alpha_scale_start` to `alpha_scale_end`.
For a classification domain the CE is taken over its label first tokens (`ce="labels"`, the default), which
is how the evaluation scores it: with the CE over the whole vocabulary (`ce="vocab"`) most of what a router
learns is to move mass from " " and "\n" onto label-like tokens, and on well-conditioned (centred) PIDs it
learned to favour one label and collapsed on in-domain and unseen tasks (BENCHMARKS.md "## ICR").
The encoder embeddings and the zero-shot entropies are computed once up front (both frozen).

Examples come from the train part of `tasks.split(task, holdout, split_seed, min_train=SHOTS)`, the split
`evaluate` uses (its seed is kept apart from the training seed), so the evaluation's test items are never
trained on (a small task contributes its few-shot pool).
Device placement and data sharding go through accelerate's `Accelerator`, so the same loop runs on the CPU
or under a multi-process launch (`accelerate launch`, `torchrun`); two CPU processes are tested against one
process with the global batch (GPUs were not available to test).
"""

from __future__ import annotations

import contextlib
import json
import random
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import torch
from torch.utils.data import DataLoader

from icr_app.core.artefacts import load_artefact, save_artefact
from icr_app.core.grads import frozen
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import SHOTS, Template
from icr_app.core.scoring import encode, first_token_id, label_set, prefill
from icr_app.core.tasks import Task, split
from icr_app.methods.icr import router as router_module
from icr_app.methods.icr.pids import FILE as PIDS_FILE
from icr_app.methods.icr.pids import PIDs, extract_pids, random_basis
from icr_app.methods.icr.router import Encoder, ICRRouter, new_router
from icr_app.methods.icr.routing import Rope, Rows, routing

CHECKPOINT = "checkpoint.safetensors"


def _f(default, text: str):  # noqa: ANN001, ANN202 - a field with its help text, for the `icr train` flags
    return field(default=default, metadata={"help": text})


@dataclass
class TrainConfig:
    # the PIDs and where routing acts
    rank: int = _f(8, "r, the PID directions per layer")
    layers: list[int] | None = _f(None, "comma-separated routed layers (default: the last third)")
    rows: Rows = _f("all", "route every query row ('all', measured better) or only the answer position")
    rope: Rope = _f("pre", "PIDs and routing on pre-RoPE ('pre') or rotated ('post') queries and keys")
    centred: bool = _f(True, "centred PCA for the PIDs (the uncentred second moment barely trains)")
    basis: Literal["pids", "random"] = _f("pids", "PIDs, or random orthonormal bases (the paper's ablation)")
    # the prompts the PIDs and the router learn from
    pid_prompts: int = _f(32, "few-shot prompts per domain for the PIDs")
    demos_per_class: int = _f(5, "demonstrations per class in those prompts")
    max_demos: int = _f(10, "at most this many demonstrations per prompt")
    examples_per_domain: int = _f(800, "zero-shot training prompts per domain, from each domain's train split "
                                       "(more data trained better routers)")
    holdout: int = _f(100, "size of each domain's evaluation test split, kept out of training")
    split_seed: int = _f(0, "the seed of that split: the evaluation's (evaluate's default), kept apart from the "
                            "training seed so that no training seed can draw test items")
    # the optimiser
    epochs: int = _f(2, "passes over the training prompts")
    batch_size: int = _f(4, "prompts per step (per process)")
    lr: float = _f(1e-3, "AdamW learning rate (the paper's 1e-4 is for thousands of prompts per domain; it "
                         "barely moves a router trained on CPU-sized data)")
    weight_decay: float = _f(0.01, "AdamW weight decay")
    grad_clip: float = _f(1.0, "gradient norm clip")
    # the loss
    ce: Literal["labels", "vocab"] = _f("labels", "classification CE over the labels' first tokens, or the vocab")
    lambda_conf: float = _f(0.01, "weight of the confidence term ReLU(H(p_ICR) - H(p_zs))")
    lambda_spar: float = _f(1e-3, "weight of the depth-weighted |α| sparsity term")
    lambda_gate: float = _f(0.02, "weight of the |γ| gate term")
    depth_weight_max: float = _f(3.0, "the sparsity weight of the deepest routed layer, rising linearly from 1 "
                                      "at the first routed layer")
    # the router network and the run
    alpha_scale_start: float = _f(1.0, "α scale at the first step (annealed linearly)")
    alpha_scale_end: float = _f(0.8, "α scale at the last step, kept by the saved router")
    hidden: int = _f(256, "hidden width of the α and γ MLPs")
    seed: int = _f(0, "training seed (the router's init and the order of examples)")
    checkpoint_every: int = _f(50, "save a resumable checkpoint every this many steps")


def entropy(logits: torch.Tensor) -> torch.Tensor:
    logp = torch.log_softmax(logits, -1)
    return -(logp.exp() * logp).sum(-1)


def depth_weights(n_routed: int, top: float) -> torch.Tensor:
    return torch.linspace(1.0, top, n_routed) if n_routed > 1 else torch.tensor([top])


def icr_loss(logits: torch.Tensor, target: torch.Tensor, h_zs: torch.Tensor, alpha: torch.Tensor,
             gamma: torch.Tensor, cfg: TrainConfig, allowed: torch.Tensor | None = None,
             ) -> tuple[torch.Tensor, dict[str, float]]:
    """The four-part loss of icr_app/methods/icr/README.md for a batch; also returns each part for the log.

    `allowed` (B, V) restricts the CE of each row to its candidate tokens (`ce="labels"`); the entropy terms
    stay over the full vocabulary.
    """
    ce_logits = logits if allowed is None else logits.masked_fill(~allowed, torch.finfo(logits.dtype).min)
    ce = torch.nn.functional.cross_entropy(ce_logits, target)
    conf = torch.relu(entropy(logits) - h_zs).mean()
    w = depth_weights(alpha.shape[1], cfg.depth_weight_max).to(alpha.device)
    spar = (w * alpha.abs().sum(-1) / alpha.shape[-1]).mean()
    gate = (gamma.abs().sum(-1) / gamma.shape[-1]).mean()
    loss = ce + cfg.lambda_conf * conf + cfg.lambda_spar * spar + cfg.lambda_gate * gate
    return loss, {"loss": loss.item(), "ce": ce.item(), "conf": conf.item(), "spar": spar.item(),
                  "gate": gate.item()}


def alpha_scale(cfg: TrainConfig, step: int, total: int) -> float:
    frac = step / max(1, total - 1)
    return cfg.alpha_scale_start + (cfg.alpha_scale_end - cfg.alpha_scale_start) * min(1.0, frac)


@dataclass
class Examples:
    prompts: list[str]
    targets: torch.Tensor  # first answer token ids
    emb: torch.Tensor
    h_zs: torch.Tensor
    candidates: list[tuple[int, ...] | None]  # CE restricted to these token ids; None: the whole vocabulary

    def allowed(self, idx: list[int], vocab: int) -> torch.Tensor | None:
        """(B, V) mask of the CE candidates of these rows, or None when every row uses the whole vocabulary."""
        if all(self.candidates[i] is None for i in idx):
            return None
        mask = torch.zeros(len(idx), vocab, dtype=torch.bool)
        for row, i in enumerate(idx):
            cand = self.candidates[i]
            mask[row, list(cand) if cand is not None else slice(None)] = True
        return mask


def ce_candidates(lm: LoadedModel, task: Task, mode: str, template: Template | None = None) -> tuple[int, ...] | None:
    """The label first tokens of a classification task, as answers in `template` (default: plain), when
    `mode == "labels"` and they are distinct."""
    if mode not in ("vocab", "labels"):
        raise ValueError(f"ce must be 'vocab' or 'labels', not {mode!r}")
    if mode == "vocab" or task.kind != "classification":
        return None
    labels = label_set(lm, task.labels, template)
    return tuple(labels.first_ids) if labels.first_token_unique else None


def training_examples(lm: LoadedModel, tasks: list[Task], cfg: TrainConfig, encoder: Encoder,
                      template: Template | None, progress: Progress) -> Examples:
    """Zero-shot prompts from each domain's train split (in `template`, else the domain's own prompt), with
    frozen embeddings and zero-shot entropies."""
    rng = random.Random(cfg.seed)
    chosen, prompts, candidates, gold = [], [], [], []
    for task in tasks:
        train, _ = split(task, cfg.holdout, cfg.split_seed, min_train=SHOTS)
        picked = rng.sample(list(train.examples), min(cfg.examples_per_domain, len(train.examples)))
        chosen += picked
        prompt = task.prompt(template)  # its answers are written as the prompt's format writes them
        prompts += [prompt.zero_shot(e.input) for e in picked]
        candidates += [ce_candidates(lm, task, cfg.ce, prompt)] * len(picked)
        gold += [first_token_id(lm, e.output, prompt) for e in picked]
    targets = torch.tensor(gold)
    emb = encoder([e.input for e in chosen]).float().cpu()
    h = []
    with torch.no_grad(), lm.lock:
        for s in progress(range(0, len(prompts), 32), desc="zero-shot entropies"):
            h.append(entropy(prefill(lm, encode(lm, prompts[s: s + 32]))).cpu())
    return Examples(prompts, targets, emb, torch.cat(h), candidates)


def _checkpoint_state(opt: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """AdamW state as flat tensors plus JSON (no pickles)."""
    sd = opt.state_dict()
    tensors = {f"opt.{pid}.{k}": v for pid, st in sd["state"].items() for k, v in st.items()}
    keys = {str(p): list(st) for p, st in sd["state"].items()}
    return tensors, {"param_groups": sd["param_groups"], "state_keys": keys}


def _restore_optimizer(opt: torch.optim.Optimizer, tensors: dict[str, torch.Tensor], meta: dict[str, Any]) -> None:
    state = {int(p): {k: tensors[f"opt.{p}.{k}"] for k in keys} for p, keys in meta["state_keys"].items()}
    opt.load_state_dict({"state": state, "param_groups": meta["param_groups"]})


def _pids(lm: LoadedModel, tasks: list[Task], cfg: TrainConfig, out: Path, template: Template | None,
          progress: Progress, save: bool = True) -> PIDs:
    """Extract PIDs once per output folder (reused on resume); every process extracts, one saves."""
    if (out / PIDS_FILE).exists():
        pids = PIDs.load(out, lm)
        wanted = {"r": cfg.rank, "rope": cfg.rope, "centred": cfg.centred, "domains": [t.name for t in tasks],
                  "basis": "random" if cfg.basis == "random" else None}
        found = {**{k: pids.meta.get(k) for k in wanted}, "basis": pids.meta.get("basis")}
        if found != wanted:
            raise ValueError(f"{out} holds PIDs made with other settings ({found}, wanted {wanted}); "
                             "use another --out folder")
        return pids
    pids = extract_pids(lm, tasks, cfg.rank, cfg.rope, cfg.centred, cfg.pid_prompts, cfg.demos_per_class,
                        cfg.max_demos, cfg.seed, template, progress)
    if cfg.basis == "random":
        pids = random_basis(pids, cfg.seed)
    if save:
        pids.save(out, lm.fingerprint)
    return pids


def _resume(out: Path, lm: LoadedModel, router: ICRRouter, opt: torch.optim.Optimizer, meta: dict[str, Any]) -> int:
    """Restore `out`'s checkpoint into the router and the optimizer; the step it reached (0 when there is none)."""
    if not (out / CHECKPOINT).exists():
        return 0
    art = load_artefact(out / CHECKPOINT, "checkpoint", lm.fingerprint)
    if art.meta["config"] != meta["config"] or art.meta["domains"] != meta["domains"]:
        raise ValueError(f"{out} holds a checkpoint of another configuration; use a new --out folder")
    router.net.load_state_dict({k[4:]: v for k, v in art.tensors.items() if k.startswith("net.")})
    _restore_optimizer(opt, art.tensors, art.meta["optimizer"])
    return art.meta["step"]


def _batch_loss(lm: LoadedModel, router: ICRRouter, net: torch.nn.Module, data: Examples, idx: list[int],
                cfg: TrainConfig, device: torch.device) -> tuple[torch.Tensor, dict[str, float]]:
    """The ICR loss of one batch of training prompts, routed by `net` (the router's network as accelerate wraps it)."""
    alpha, gamma = net(data.emb[idx].to(device))
    enc = encode(lm, [data.prompts[i] for i in idx])
    with lm.lock, frozen(lm.model):  # the router's gradients only, on a model the user wrapped too
        logits = prefill(lm, enc, intervention=routing(lm, router.routes(alpha, gamma)))
    allowed = data.allowed(idx, logits.shape[-1])
    return icr_loss(logits, data.targets[idx].to(device), data.h_zs[idx].to(device), alpha, gamma, cfg,
                    None if allowed is None else allowed.to(device))


def train_router(lm: LoadedModel, tasks: list[Task], out: str | Path, cfg: TrainConfig | None = None,
                 encoder: Encoder | None = None, template: Template | None = None,
                 progress: Progress = no_progress, log_path: str | Path | None = None) -> ICRRouter:
    """PIDs, then the router; resumes from `out/checkpoint.*` when its config matches. Saves `out/router.*`."""
    cfg = cfg or TrainConfig()
    out = Path(out)
    encoder = encoder or router_module.minilm_encoder(lm.device)
    from accelerate import Accelerator  # slow to import: only when training

    accelerator = Accelerator()
    if not hasattr(lm.model, "_hf_hook"):  # a model accelerate dispatched over devices stays where its map put it
        lm.model.to(accelerator.device)
    pids = _pids(lm, tasks, cfg, out, template, progress, accelerator.is_main_process)
    data = training_examples(lm, tasks, cfg, encoder, template, progress)
    router = new_router(lm, pids, data.emb.shape[1], cfg.layers, cfg.rows, cfg.hidden, encoder, cfg.seed)
    opt = torch.optim.AdamW(router.net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    meta = {"config": asdict(cfg), "domains": [t.name for t in tasks], "n_examples": len(data.prompts)}
    step = _resume(out, lm, router, opt, meta)
    net, opt = accelerator.prepare(router.net, opt)
    per_epoch = -(-len(data.prompts) // (cfg.batch_size * accelerator.num_processes))
    total = per_epoch * cfg.epochs

    def save_checkpoint() -> None:
        if accelerator.is_main_process:
            tensors, opt_meta = _checkpoint_state(opt)
            tensors.update({f"net.{k}": v for k, v in accelerator.unwrap_model(net).state_dict().items()})
            save_artefact(out / CHECKPOINT, "checkpoint", tensors, {**meta, "step": step, "optimizer": opt_meta},
                          lm.fingerprint)

    writes_log = log_path is not None and accelerator.is_main_process
    with open(log_path, "a") if writes_log else contextlib.nullcontext() as log:  # type: ignore[arg-type]
        for epoch in range(step // per_epoch, cfg.epochs):
            order = torch.randperm(len(data.prompts), generator=torch.Generator().manual_seed(cfg.seed + epoch))
            # A list is a map-style dataset, which torch's stubs do not say.
            batches: DataLoader[int] = DataLoader(order.tolist(), batch_size=cfg.batch_size)  # type: ignore[arg-type]
            loader = accelerator.prepare_data_loader(batches)
            loader = accelerator.skip_first_batches(loader, step - epoch * per_epoch)
            for idx in progress(loader, desc=f"router epoch {epoch + 1}/{cfg.epochs}"):
                accelerator.unwrap_model(net).alpha_scale.fill_(alpha_scale(cfg, step, total))
                loss, parts = _batch_loss(lm, router, net, data, idx.tolist(), cfg, accelerator.device)
                accelerator.backward(loss)
                accelerator.clip_grad_norm_(net.parameters(), cfg.grad_clip)
                opt.step()
                opt.zero_grad()
                step += 1
                if log:
                    log.write(json.dumps({"step": step, "epoch": epoch, "time": time.time(), **parts}) + "\n")
                    log.flush()
                if step % cfg.checkpoint_every == 0:
                    save_checkpoint()
    save_checkpoint()
    router.net = accelerator.unwrap_model(net)
    router.net.alpha_scale.fill_(cfg.alpha_scale_end)
    router.meta = replace(router.meta, made=meta)
    if accelerator.is_main_process:
        router.save(out)
    return router


