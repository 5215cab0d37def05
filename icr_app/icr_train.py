"""Training the ICR router once on a mix of domains (DESIGN.md §2), with resumable checkpoints.

Only the router trains; the LLM and the encoder are frozen. Per example (a ZERO-shot prompt of an in-domain
task), the loss is

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

import argparse
import json
import random
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader

from icr_app.icr_io import load_artefact, save_artefact
from icr_app.methods import Progress, no_progress
from icr_app.models import LoadedModel
from icr_app.pids import PIDs, extract_pids, random_basis
from icr_app.prompts import SHOTS, Template
from icr_app.router import Encoder, ICRRouter, minilm_encoder, new_router
from icr_app.routing import routing
from icr_app.scoring import encode, first_token_id, label_set, prefill
from icr_app.tasks import Task, split

CHECKPOINT = "checkpoint"


@dataclass
class TrainConfig:
    rank: int = 8
    layers: list[int] | None = None  # None: the last third
    rows: str = "all"  # measured better than "last" (routing.py docstring, BENCHMARKS.md)
    rope: str = "pre"
    ce: str = "labels"  # classification domains' CE over their label first tokens; "vocab": the whole vocabulary
    centred: bool = True  # measured: uncentred PIDs barely train (pids.py docstring)
    basis: str = "pids"  # or "random" (the ablation)
    pid_prompts: int = 32  # per domain
    demos_per_class: int = 5
    max_demos: int = 10
    examples_per_domain: int = 800  # more data, better router: 150 -> 400 -> 800 gave 0.280 -> 0.340 -> 0.367 in-domain
    holdout: int = 100  # size of the evaluation test split kept out of training
    split_seed: int = 0  # the evaluation's split seed (evaluate's default), apart from the training seed
    epochs: int = 2
    batch_size: int = 4
    lr: float = 1e-3  # DESIGN.md: 1e-4, for thousands of prompts; on CPU-sized runs it barely moves the router
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    lambda_conf: float = 0.01
    lambda_spar: float = 1e-3
    lambda_gate: float = 0.02
    depth_weight_max: float = 3.0
    alpha_scale_start: float = 1.0
    alpha_scale_end: float = 0.8
    hidden: int = 256
    seed: int = 0
    checkpoint_every: int = 50


def entropy(logits: torch.Tensor) -> torch.Tensor:
    logp = torch.log_softmax(logits, -1)
    return -(logp.exp() * logp).sum(-1)


def depth_weights(n_routed: int, top: float) -> torch.Tensor:
    return torch.linspace(1.0, top, n_routed) if n_routed > 1 else torch.tensor([top])


def icr_loss(logits: torch.Tensor, target: torch.Tensor, h_zs: torch.Tensor, alpha: torch.Tensor,
             gamma: torch.Tensor, cfg: TrainConfig, allowed: torch.Tensor | None = None,
             ) -> tuple[torch.Tensor, dict[str, float]]:
    """The four-part loss of DESIGN.md §2 for a batch; also returns each part for the log.

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


def ce_candidates(lm: LoadedModel, task: Task, mode: str) -> tuple[int, ...] | None:
    """The label first tokens of a classification task when `mode == "labels"` and they are distinct."""
    if mode not in ("vocab", "labels"):
        raise ValueError(f"ce must be 'vocab' or 'labels', not {mode!r}")
    if mode == "vocab" or task.kind != "classification":
        return None
    labels = label_set(lm, task.labels)
    return tuple(labels.first_ids) if labels.first_token_unique else None


def training_examples(lm: LoadedModel, tasks: list[Task], cfg: TrainConfig, encoder: Encoder,
                      template: Template, progress: Progress) -> Examples:
    """Zero-shot prompts from each domain's train split, with frozen embeddings and zero-shot entropies."""
    rng = random.Random(cfg.seed)
    chosen, candidates = [], []
    for task in tasks:
        train, _ = split(task, cfg.holdout, cfg.split_seed, min_train=SHOTS)
        picked = rng.sample(list(train.examples), min(cfg.examples_per_domain, len(train.examples)))
        chosen += picked
        candidates += [ce_candidates(lm, task, cfg.ce)] * len(picked)
    prompts = [template.zero_shot(e.input) for e in chosen]
    targets = torch.tensor([first_token_id(lm, e.output) for e in chosen])
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


def _pids(lm: LoadedModel, tasks: list[Task], cfg: TrainConfig, out: Path, template: Template,
          progress: Progress, save: bool = True) -> PIDs:
    """Extract PIDs once per output folder (reused on resume); every process extracts, one saves."""
    if (out / "pids.json").exists():
        pids = PIDs.load(out, lm)
        wanted = {"r": cfg.rank, "rope": cfg.rope, "centred": cfg.centred, "domains": [t.name for t in tasks],
                  "basis": "random" if cfg.basis == "random" else None}
        found = {**{k: pids.meta.get(k) for k in wanted}, "basis": pids.meta.get("basis")}
        if found != wanted:
            raise ValueError(f"{out} holds PIDs made with other settings ({found}, wanted {wanted}); "
                             "use another --out folder")
        return pids
    pids = extract_pids(lm, tasks, cfg.rank, cfg.rope, cfg.centred, cfg.pid_prompts, cfg.demos_per_class,  # type: ignore[arg-type]
                        cfg.max_demos, cfg.seed, template, progress)
    if cfg.basis == "random":
        pids = random_basis(pids, cfg.seed)
    if save:
        pids.save(out)
    return pids


def train_router(lm: LoadedModel, tasks: list[Task], out: str | Path, cfg: TrainConfig | None = None,
                 encoder: Encoder | None = None, template: Template | None = None,
                 progress: Progress = no_progress, log_path: str | Path | None = None) -> ICRRouter:
    """PIDs, then the router; resumes from `out/checkpoint.*` when its config matches. Saves `out/router.*`."""
    cfg = cfg or TrainConfig()
    out, template = Path(out), template or Template()
    encoder = encoder or minilm_encoder()
    from accelerate import Accelerator  # 1.6 s to import: only when training

    accelerator = Accelerator()
    lm.model.to(accelerator.device)
    pids = _pids(lm, tasks, cfg, out, template, progress, accelerator.is_main_process)
    data = training_examples(lm, tasks, cfg, encoder, template, progress)
    router = new_router(lm, pids, data.emb.shape[1], cfg.layers, cfg.rows, cfg.hidden, encoder, cfg.seed)  # type: ignore[arg-type]
    opt = torch.optim.AdamW(router.net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    meta = {"config": asdict(cfg), "domains": [t.name for t in tasks], "n_examples": len(data.prompts)}
    step = 0
    if (out / f"{CHECKPOINT}.json").exists():
        tensors, ck = load_artefact(out, CHECKPOINT, lm)
        if ck["config"] != asdict(cfg) or ck["domains"] != meta["domains"]:
            raise ValueError(f"{out} holds a checkpoint of another configuration; use a new --out folder")
        router.net.load_state_dict({k[4:]: v for k, v in tensors.items() if k.startswith("net.")})
        _restore_optimizer(opt, tensors, ck["optimizer"])
        step = ck["step"]
    net, opt = accelerator.prepare(router.net, opt)
    per_epoch = -(-len(data.prompts) // (cfg.batch_size * accelerator.num_processes))
    total = per_epoch * cfg.epochs
    log = open(log_path, "a") if log_path and accelerator.is_main_process else None

    def save_checkpoint() -> None:
        if accelerator.is_main_process:
            tensors, opt_meta = _checkpoint_state(opt)
            tensors.update({f"net.{k}": v for k, v in accelerator.unwrap_model(net).state_dict().items()})
            save_artefact(out, CHECKPOINT, tensors, {**meta, "fingerprint": lm.fingerprint, "step": step,
                                                     "optimizer": opt_meta})

    try:
        for epoch in range(step // per_epoch, cfg.epochs):
            order = torch.randperm(len(data.prompts), generator=torch.Generator().manual_seed(cfg.seed + epoch))
            loader = accelerator.prepare_data_loader(DataLoader(order.tolist(), batch_size=cfg.batch_size))
            loader = accelerator.skip_first_batches(loader, step - epoch * per_epoch)
            for idx in progress(loader, desc=f"router epoch {epoch + 1}/{cfg.epochs}"):
                idx = idx.tolist()
                accelerator.unwrap_model(net).alpha_scale.fill_(alpha_scale(cfg, step, total))
                alpha, gamma = net(data.emb[idx].to(accelerator.device))
                enc = encode(lm, [data.prompts[i] for i in idx])
                with lm.lock, routing(lm, router.routes(alpha, gamma)):
                    logits = prefill(lm, enc)
                allowed = data.allowed(idx, logits.shape[-1])
                loss, parts = icr_loss(logits, data.targets[idx].to(accelerator.device),
                                       data.h_zs[idx].to(accelerator.device), alpha, gamma, cfg,
                                       None if allowed is None else allowed.to(accelerator.device))
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
    finally:
        if log:
            log.close()
    save_checkpoint()
    router.net = accelerator.unwrap_model(net)
    router.net.alpha_scale.fill_(cfg.alpha_scale_end)
    router.meta = meta
    if accelerator.is_main_process:
        router.save(out)
    return router


def add_config_args(parser: argparse.ArgumentParser) -> None:
    """One `--flag` per TrainConfig field (lists as comma-separated ints), so every knob is configurable."""
    for f in fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        if f.type == "bool":
            parser.add_argument(flag, type=lambda s: s.lower() in ("1", "true", "yes"), default=f.default)
        elif f.name == "layers":
            parser.add_argument(flag, default=None, help="comma-separated layer indices (default: last third)")
        else:
            parser.add_argument(flag, type={"int": int, "float": float}.get(str(f.type), str), default=f.default)


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    values = {f.name: getattr(args, f.name) for f in fields(TrainConfig)}
    if values["layers"] is not None:
        values["layers"] = [int(x) for x in values["layers"].split(",")]
    return TrainConfig(**values)
