"""ATV's generator, trained once across domains (icr_app/methods/atv/README.md): a query's sentence embedding ->
one vector per block of the model, added to the residual stream after that block at the query's last token.

The paper encodes the query with a small language model (GPT-2, fine-tuned with the rest) and maps its
last-token state to L·d numbers with one linear layer. Here the encoder is the frozen MiniLM that ICR's router
and ELICIT's retriever embed queries with, so the non-linearity the paper's trained small model gives lives in
one trained hidden layer instead: e -> GELU(W_in e + b_in) -> W_out · + b_out, reshaped to (L, d). W_out and
b_out start at zero, so an untrained generator answers as zero-shot and training starts from there.

Training is the paper's objective: the model frozen, the generator learns to lower the gold answer's loss with
its vectors added (`methods.answer_loss`'s "answer" objective, as the learned task vector's), each step a batch of
one domain's training prompts in that domain's own prompt. Examples come from the train part of
`tasks.split(task, holdout, split_seed, min_train=SHOTS)`, the split `evaluate` uses, as for ICR's router and
ELICIT's library, so the evaluation's test items are never read; `val_size` of them per domain are held out to
report the loss and pick the step kept (the lowest mean held-out loss over the domains).
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from icr_app.core.artefacts import shipped_file
from icr_app.core.encoder import MINILM, Encoder, minilm_encoder
from icr_app.core.grads import add_grad
from icr_app.core.loading import dtype_name
from icr_app.core.models import LoadedModel
from icr_app.core.paths import ASSETS
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import SHOTS, Template
from icr_app.core.seeds import seeded
from icr_app.core.tasks import Task, split
from icr_app.core.trace import Trace, main_tensor, with_main
from icr_app.methods.answer_loss import Examples, Scorer, prompt_examples, scorer_for
from icr_app.methods.base import Answering, Method
from icr_app.methods.last_token import add_at
from icr_app.methods.state import StoredMeta, StoredState, axes

KIND = "atv-generator"
FILE = "generator.safetensors"
SHIPPED = ASSETS / "atv"  # one folder per built-in model name


def _f(default: Any, text: str) -> Any:
    return field(default=default, metadata={"help": text})


@dataclass
class GeneratorConfig:
    """The paper's optimiser (Adam, lr 5e-4, weight decay 1e-5) with as many steps as two CPU cores allow."""

    hidden: int = _f(64, "width of the generator's hidden layer (the paper's trained GPT-2 has none of ours)")
    steps: int = _f(600, "Adam steps, each one domain's batch (the paper: 15 epochs of single examples)")
    batch_size: int = _f(8, "training prompts per step, all of one domain")
    lr: float = _f(5e-4, "Adam learning rate (the paper's)")
    weight_decay: float = _f(1e-5, "Adam weight decay (the paper's)")
    per_domain: int = _f(48, "training examples per domain, drawn from its train split")
    val_size: int = _f(12, "held-out examples per domain (at most a quarter of its train split) for the loss")
    eval_every: int = _f(100, "steps between held-out losses; the generator kept is the one with the lowest")
    holdout: int = _f(100, "size of each domain's evaluation test split, kept out of training")
    split_seed: int = _f(0, "the seed of that split: the evaluation's")
    seed: int = _f(0, "seed of the examples drawn, the generator's init and the order of the steps")


@dataclass
class GeneratorTensors:
    """What a generator stores: an MLP from E-d embeddings through H hidden units to L × d."""

    w_in: torch.Tensor = field(metadata=axes("width", "embed", trained=True))
    b_in: torch.Tensor = field(metadata=axes("width", trained=True))
    w_out: torch.Tensor = field(metadata=axes("layers", "hidden", "width", trained=True))
    b_out: torch.Tensor = field(metadata=axes("layers", "hidden", trained=True))

    def generator_tensors(self) -> dict[str, torch.Tensor]:
        return {f.name: getattr(self, f.name) for f in fields(GeneratorTensors)}

    def vectors(self, emb: torch.Tensor) -> torch.Tensor:
        """(L, B, d): each block's vector for each query embedding of `emb` (B, E)."""
        if emb.shape[-1] != self.w_in.shape[1]:
            raise ValueError(f"the generator reads {self.w_in.shape[1]}-d embeddings, the queries are "
                             f"{emb.shape[-1]}-d: embed them with the encoder it was trained with")
        h = F.gelu(emb @ self.w_in.T + self.b_in)  # (B, H)
        return torch.einsum("ldh,bh->lbd", self.w_out, h) + self.b_out[:, None]


@dataclass(kw_only=True)
class GeneratorMeta(StoredMeta):
    domains: list[str]
    templates: list[dict[str, Any]]  # each domain's prompt it was trained in (`Template.to_json`)
    config: dict[str, Any]
    encoder: str
    n_train: int
    n_val: int
    best_step: int
    val_loss: list[float]  # mean held-out loss over the domains at step 0 (zero-shot) and every eval
    zero_shot_val_loss: list[float]  # per domain
    val_loss_per_domain: list[float]  # per domain, at the step kept
    dtype: str
    build_s: float
    created: str


@dataclass
class Generator(GeneratorTensors, StoredState):
    """A trained generator and how it was trained; refused by a model other than the one it was trained on."""

    KIND = KIND
    TITLE = "ATV generator"
    META = GeneratorMeta

    meta: GeneratorMeta = field(kw_only=True)
    fingerprint: str = field(kw_only=True)

    @classmethod
    def load_from(cls, path: str | Path, lm: LoadedModel) -> Generator:
        """The generator in `path` (a file, or a folder holding generator.safetensors)."""
        path = Path(path)
        return cls.load(path / FILE if path.is_dir() else path, lm)


def shipped_generator(lm: LoadedModel) -> Path:
    """The generator the package ships for a built-in model; ArtefactError when there is none."""
    return shipped_file(SHIPPED, lm.name, FILE,
                        "atv.not_shipped", f"icl-lab atv train --model {lm.name} --domains ... --out FOLDER")


@contextmanager
def added(lm: LoadedModel, vectors: torch.Tensor, position: int) -> Iterator[dict[str, Any]]:
    """An intervention: after each block l, vectors[l] (B, d) added at `position` of row b (-1: each row's last
    prompt token in a left-padded batch; 0: a training step's first token, the last prompt token after a cached
    prefix)."""

    def add(layer: int, out: Any) -> Any:
        return with_main(out, add_at(main_tensor(out), vectors[layer][:, None], position))

    with Trace(dict(enumerate(lm.adapter.blocks)), edit_output=add):
        yield {}


@dataclass
class Domain:
    """One training domain: its prompts (prefixes cached), what it is scored against, its queries embedded."""

    name: str
    template: Template
    scorer: Scorer
    fit: Examples
    val: Examples
    fit_emb: torch.Tensor  # (N, E) on the model's device
    val_emb: torch.Tensor


def domain_of(lm: LoadedModel, task: Task, cfg: GeneratorConfig, encoder: Encoder, template: Template | None,
              ) -> Domain:
    """`task`'s train split drawn into fit and held-out examples, in `template`, else the task's own prompt."""
    train, _ = split(task, cfg.holdout, cfg.split_seed, min_train=SHOTS)
    pool = list(train.examples)
    random.Random(cfg.seed).shuffle(pool)
    n_val = max(1, min(cfg.val_size, len(pool) // 4))
    val, fit = pool[:n_val], pool[n_val: n_val + cfg.per_domain]
    base = Method(lm, Answering.of(lm, task, template))

    def embedded(examples: list) -> torch.Tensor:
        return encoder([e.input for e in examples]).float().to(lm.device)

    return Domain(task.name, base.template, scorer_for(lm, base, "answer"), prompt_examples(lm, base, fit),
                  prompt_examples(lm, base, val), embedded(fit), embedded(val))


def domain_loss(gen: GeneratorTensors, d: Domain, ex: Examples, emb: torch.Tensor, rows: torch.Tensor,
                ) -> torch.Tensor:
    """The mean answer loss over `rows` of `ex` with the generator's vectors for their queries added."""
    lm = ex.pool.lm
    with lm.lock, added(lm, gen.vectors(emb[rows]), position=0):
        return d.scorer.loss(ex, rows)[0]


@torch.no_grad()
def held_out_losses(gen: GeneratorTensors, domains: list[Domain], batch_size: int) -> list[float]:
    """Each domain's mean held-out loss under the generator."""
    out = []
    for d in domains:
        chunks = torch.arange(len(d.val.pool), device=d.val_emb.device).split(batch_size)
        total = sum(float(domain_loss(gen, d, d.val, d.val_emb, c)) * len(c) for c in chunks)
        out.append(total / len(d.val.pool))
    return out


def new_generator(lm: LoadedModel, embed: int, hidden: int, seed: int) -> GeneratorTensors:
    """W_in drawn as a linear layer's default init (seeded, whatever the global generator); the output zero."""
    with seeded(seed):
        first = torch.nn.Linear(embed, hidden)
    d = lm.model.config.hidden_size
    return GeneratorTensors(first.weight.detach().to(lm.device), first.bias.detach().to(lm.device),
                            torch.zeros(lm.n_layers, d, hidden, device=lm.device),
                            torch.zeros(lm.n_layers, d, device=lm.device))


def train_generator(gen: GeneratorTensors, domains: list[Domain], cfg: GeneratorConfig, progress: Progress,
                    ) -> tuple[GeneratorTensors, int, list[float], list[float]]:
    """Adam on the generator (the model frozen); a step is one domain's batch, domains taken in a seeded
    shuffled round. Returns the generator with the lowest mean held-out loss (step 0: the zero-shot one), its
    step, the mean held-out losses at each evaluation and the kept one's per domain."""
    params = [t.requires_grad_(True) for t in gen.generator_tensors().values()]
    opt = torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    rng = random.Random(cfg.seed)
    per_domain = held_out_losses(gen, domains, cfg.batch_size)
    history, best = [sum(per_domain) / len(domains)], (0, per_domain, _copy(gen))
    order: list[int] = []
    for step in progress(range(1, cfg.steps + 1), desc="ATV generator"):
        order = order or rng.sample(range(len(domains)), len(domains))
        d = domains[order.pop()]
        rows = torch.tensor(rng.sample(range(len(d.fit.pool)), min(cfg.batch_size, len(d.fit.pool))),
                            device=d.fit_emb.device)
        opt.zero_grad()
        add_grad(domain_loss(gen, d, d.fit, d.fit_emb, rows), params)
        opt.step()
        if step % cfg.eval_every == 0 or step == cfg.steps:
            per_domain = held_out_losses(gen, domains, cfg.batch_size)
            history.append(sum(per_domain) / len(domains))
            if history[-1] < min(history[:-1]):
                best = (step, per_domain, _copy(gen))
    return best[2], best[0], history, best[1]


def _copy(gen: GeneratorTensors) -> GeneratorTensors:
    return GeneratorTensors(**{k: t.detach().float().cpu().clone() for k, t in gen.generator_tensors().items()})


def build_generator(lm: LoadedModel, tasks: list[Task], cfg: GeneratorConfig | None = None,
                    encoder: Encoder | None = None, template: Template | None = None,
                    progress: Progress = no_progress) -> Generator:
    """Train a generator for `lm` on `tasks` (at least two); the model is only read."""
    cfg = cfg or GeneratorConfig()
    if len(tasks) < 2:
        raise ValueError("a generator needs at least two domains (it learns what tells their queries apart)")
    encoder_name = MINILM if encoder is None else getattr(encoder, "__name__", "custom")
    encoder = encoder or minilm_encoder(lm.device)
    t0 = time.perf_counter()
    domains = [domain_of(lm, t, cfg, encoder, template) for t in progress(tasks, desc="ATV domains")]
    gen = new_generator(lm, domains[0].fit_emb.shape[1], cfg.hidden, cfg.seed)
    zero_shot = held_out_losses(gen, domains, cfg.batch_size)
    kept, best_step, history, per_domain = train_generator(gen, domains, cfg, progress)
    meta = GeneratorMeta(
        domains=[t.name for t in tasks], templates=[d.template.to_json() for d in domains], config=asdict(cfg),
        encoder=encoder_name, n_train=sum(len(d.fit.pool) for d in domains),
        n_val=sum(len(d.val.pool) for d in domains), best_step=best_step, val_loss=history,
        zero_shot_val_loss=zero_shot, val_loss_per_domain=per_domain, dtype=dtype_name(lm.dtype),
        build_s=time.perf_counter() - t0, created=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    return Generator(**kept.generator_tensors(), meta=meta, fingerprint=lm.fingerprint)
