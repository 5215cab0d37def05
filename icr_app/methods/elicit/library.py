"""ELICIT's capability library and its retriever, built once from in-domain tasks (icr_app/methods/elicit/README.md).

An entry per domain: few-shot prompts of the domain's train split (16 demonstrations, the paper's), in the
domain's own prompt where it has one (a dataset spec's), run through the model, and the residual stream after
every block read at their last token and averaged over the prompts.
A layer sweep on held-out queries of the domain (the block's vector added, times the strength, to a zero-shot
query's last-token state there) picks the block; the entry keeps its vector at that block.

The retriever scores a (query, ICL prompt) pair as "the same task" with the paper's classifier, an MLP over the
two texts' concatenated sentence embeddings, trained on pairs of a domain's queries with its own prompts
(positive) and with other domains' prompts (negative). The paper fine-tunes its SimCSE encoder with the MLP;
here the encoder is the frozen MiniLM ICR's router embeds queries with, so only the MLP trains and the prompts'
embeddings are stored. An entry's score for a query is the best of its prompts' scores. The scores of held-out
queries for their own entry are kept, so a recall (the share of in-domain queries let through, the paper's
0.8) gives the threshold below which a query gets no vector.

Examples come from the train part of `tasks.split(task, holdout, split_seed, min_train=SHOTS)`, the split
`evaluate` uses, as for ICR's router, so the evaluation's test items are never read.
"""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch
from torch import nn

from icr_app.core.artefacts import ArtefactError, load_artefact, save_artefact, shipped_file
from icr_app.core.capture import blocks, last_token_means
from icr_app.core.encoder import MINILM, Encoder, minilm_encoder
from icr_app.core.loading import dtype_name
from icr_app.core.models import LoadedModel
from icr_app.core.paths import ASSETS
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import SHOTS, Template
from icr_app.core.seeds import seeded
from icr_app.core.tasks import Example, Task, sample_icl_prompts, split
from icr_app.methods.base import Answering, Method
from icr_app.methods.last_token import Combine, best_layer, layer_sweep
from icr_app.methods.state import axes

KIND = "elicit-library"
FILE = "library.safetensors"
SHIPPED = ASSETS / "elicit"  # one folder per built-in model name


def _f(default: Any, text: str) -> Any:
    return field(default=default, metadata={"help": text})


@dataclass
class LibraryConfig:
    """The paper's library settings where a CPU allows them (16 demonstrations, 10 prompts, strength 2)."""

    n_prompts: int = _f(10, "ICL prompts per domain, averaged into its vector and embedded for the retriever")
    n_demos: int = _f(16, "demonstrations per prompt (fewer when a domain's train split is smaller)")
    val_size: int = _f(32, "held-out queries per domain (at most half its train split) for the layer sweep and "
                           "the threshold")
    strength: float = _f(2.0, "the sweep adds the vector times this (the paper's weight on the vector)")
    queries_per_domain: int = _f(200, "training queries per domain for the retriever")
    holdout: int = _f(100, "size of each domain's evaluation test split, kept out of the library")
    split_seed: int = _f(0, "the seed of that split: the evaluation's")
    epochs: int = _f(15, "passes of the retriever over its pairs (the paper's 15)")
    batch_size: int = _f(32, "pairs per retriever step (the paper's 32)")
    lr: float = _f(1e-3, "AdamW learning rate of the retriever's MLP (the paper's 2e-5 fine-tunes its encoder too)")
    hidden: int = _f(256, "hidden width of the retriever's MLP (the paper's 512)")
    dropout: float = _f(0.2, "dropout in the retriever's MLP while it trains (the paper's)")
    forward_batch: int = _f(4, "prompts per forward pass of the model")
    seed: int = _f(0, "seed of the prompts, the held-out queries and the retriever's training")


@dataclass
class LibraryTensors:
    """What the library stores: T entries, P prompts each, E-d embeddings, an MLP of width H."""

    vectors: torch.Tensor = field(metadata=axes("entries", "hidden"))  # each entry's vector at its block
    layers: torch.Tensor = field(metadata=axes("entries"))  # the block each entry's vector is added after
    sweep: torch.Tensor = field(metadata=axes("entries", "columns"))  # held-out accuracy per block, zero-shot last
    prompt_emb: torch.Tensor = field(metadata=axes("entries", "prompts", "embed"))
    w_in: torch.Tensor = field(metadata=axes("width", "pair", trained=True))  # pair = 2·embed: (query, prompt)
    b_in: torch.Tensor = field(metadata=axes("width", trained=True))
    w_out: torch.Tensor = field(metadata=axes("width", trained=True))
    b_out: torch.Tensor = field(metadata=axes(1, trained=True))
    held_out: torch.Tensor = field(metadata=axes("held_out"))  # held-out queries' scores for their own entry

    def library_tensors(self) -> dict[str, torch.Tensor]:
        return {f.name: getattr(self, f.name) for f in fields(LibraryTensors)}

    def entry_scores(self, emb: torch.Tensor) -> torch.Tensor:
        """(B, T): per query embedding (B, E), each entry's best score over its prompts, in [0, 1]."""
        p = self.prompt_emb.to(emb.device)
        if emb.shape[-1] != p.shape[-1]:
            raise ValueError(f"the library's prompts were embedded {p.shape[-1]}-d, the queries {emb.shape[-1]}-d: "
                             "embed them with the encoder the library was built with")
        pairs = torch.cat(torch.broadcast_tensors(emb[:, None, None, :], p[None]), -1)  # (B, T, P, 2E)
        hidden = torch.relu(pairs @ self.w_in.to(emb.device).T + self.b_in.to(emb.device))
        logits = hidden @ self.w_out.to(emb.device) + self.b_out.to(emb.device)
        return torch.sigmoid(logits).amax(-1)

    def threshold(self, recall: float) -> float:
        """The score that lets `recall` of the held-out in-domain queries through (the paper's recall 0.8)."""
        if not 0.0 <= recall <= 1.0:
            raise ValueError(f"recall must be between 0 and 1, not {recall}")
        return float(torch.quantile(self.held_out.float(), 1.0 - recall))


@dataclass
class Library(LibraryTensors):
    """The tensors and `info`: the entries' names, the domains, the settings, the encoder, how it was built."""

    info: dict[str, Any] = field(default_factory=dict)

    def save(self, path: str | Path, fingerprint: str) -> Path:
        return save_artefact(path, KIND, self.library_tensors(), self.info, fingerprint)

    @classmethod
    def load(cls, path: str | Path, lm: LoadedModel) -> Library:
        """The library in `path` (a file, or a folder holding library.safetensors); refuses another model's."""
        path = Path(path)
        art = load_artefact(path / FILE if path.is_dir() else path, KIND, lm.fingerprint)
        try:
            return cls(**{f.name: art.tensors[f.name] for f in fields(LibraryTensors)}, info=art.meta)
        except KeyError as err:
            raise ArtefactError("artefact.inconsistent", file=path.name, what="ELICIT library", err=err) from None


def shipped_library(lm: LoadedModel) -> Path:
    """The library the package ships for a built-in model; ArtefactError when there is none."""
    return shipped_file(SHIPPED, lm.name, FILE, "elicit.not_shipped",
                        f"icl-lab elicit build-library --model {lm.name} --domains ... --out FOLDER")


@dataclass
class Entry:
    """One domain's part of the library, before the retriever trains."""

    name: str
    vector: torch.Tensor  # (d,) at `layer`
    layer: int
    sweep: torch.Tensor  # (L + 1,)
    prompts: list[str]
    queries: list[str]  # the retriever's training queries
    held_out: list[str]  # the sweep's queries, scored for the threshold


def added(strength: float) -> Combine:
    """ELICIT's edit: the vector times `strength` added to the state (the paper's weights 1 and 2)."""

    def combine(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return x + strength * v
    return combine


def build_entry(lm: LoadedModel, task: Task, cfg: LibraryConfig, template: Template | None,
                progress: Progress) -> Entry:
    """A domain's vector at every block, the sweep that picks the block, and its prompts and queries, in
    `template`, else the domain's own prompt (a dataset spec's), else the default one."""
    train, _ = split(task, cfg.holdout, cfg.split_seed, min_train=SHOTS)
    pool = list(train.examples)
    random.Random(cfg.seed).shuffle(pool)
    n_val = max(1, min(cfg.val_size, len(pool) // 2))
    val, source = pool[:n_val], Task(task.name, tuple(pool[n_val:]), task.kind)
    n_demos = min(cfg.n_demos, len(source.examples) - 1)
    prompts = sample_icl_prompts(source, task.prompt(template), cfg.n_prompts, n_demos, cfg.seed)
    means = last_token_means(lm, prompts, blocks(lm), "output", cfg.forward_batch, progress,
                             f"ELICIT library: {task.name} prompts")
    states = torch.stack([means[layer] for layer in range(lm.n_layers)])
    base = Method(lm, Answering.of(lm, task, template))
    scores = layer_sweep(lm, base, states, list(val), added(cfg.strength), cfg.forward_batch, progress,
                         f"ELICIT library: {task.name} layer sweep")
    accuracy = scores.hit.float().mean(0)
    layer = best_layer(accuracy[:-1], scores.gold_prob.mean(0)[:-1])
    queries = [e.input for e in _sample(source.examples, cfg.queries_per_domain, cfg.seed)]
    return Entry(task.name, states[layer].clone(), layer, accuracy, prompts, queries, [e.input for e in val])


def _sample(examples: tuple[Example, ...], n: int, seed: int) -> list[Example]:
    return random.Random(seed).sample(list(examples), min(n, len(examples)))


def unique_names(names: list[str]) -> list[str]:
    """Entry names, a repeated one numbered (a task file and a built-in task may share a name)."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} #{seen[name]}")
    return out


def training_pairs(queries: list[list[str]], n_prompts: list[int], seed: int) -> torch.Tensor:
    """(N, 3) rows (query index, flat prompt index, same task 0/1): each query with every prompt of its own entry
    and as many prompts drawn from the other entries, so the classes are balanced."""
    rng = random.Random(seed)
    starts = [sum(n_prompts[:t]) for t in range(len(n_prompts))]
    rows, q = [], 0
    for t, entry_queries in enumerate(queries):
        own = range(starts[t], starts[t] + n_prompts[t])
        others = [i for i in range(sum(n_prompts)) if i not in own]
        for _ in range(len(entry_queries)):
            rows += [(q, i, 1) for i in own] + [(q, i, 0) for i in rng.sample(others, min(len(own), len(others)))]
            q += 1
    return torch.tensor(rows)


def train_retriever(query_emb: torch.Tensor, prompt_emb: torch.Tensor, pairs: torch.Tensor, cfg: LibraryConfig,
                    progress: Progress) -> nn.Sequential:
    """The paper's pair classifier, on frozen embeddings: BCE on (query, prompt) pairs, AdamW."""
    with seeded(cfg.seed):  # the layers' init and the dropout masks draw from the global generator
        net = nn.Sequential(nn.Linear(2 * query_emb.shape[1], cfg.hidden), nn.ReLU(), nn.Dropout(cfg.dropout),
                            nn.Linear(cfg.hidden, 1))
        opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=0.01)
        net.train()
        for epoch in range(cfg.epochs):
            order = torch.randperm(len(pairs), generator=torch.Generator().manual_seed(cfg.seed + epoch))
            for batch in progress(order.split(cfg.batch_size), desc=f"ELICIT retriever epoch {epoch + 1}/{cfg.epochs}"):
                q, p, y = pairs[batch].T
                logits = net(torch.cat([query_emb[q], prompt_emb[p]], -1))[:, 0]
                loss = nn.functional.binary_cross_entropy_with_logits(logits, y.float())
                opt.zero_grad()
                loss.backward()
                opt.step()
        return net.eval()


def build_library(lm: LoadedModel, tasks: list[Task], cfg: LibraryConfig | None = None,
                  encoder: Encoder | None = None, template: Template | None = None,
                  progress: Progress = no_progress) -> Library:
    """The entries, then the retriever over their prompts; the model is only read."""
    cfg = cfg or LibraryConfig()
    encoder_name = MINILM if encoder is None else getattr(encoder, "__name__", "custom")
    encoder = encoder or minilm_encoder(lm.device)
    if len(tasks) < 2:
        raise ValueError("a library needs at least two domains (the retriever learns to tell them apart)")
    t0 = time.perf_counter()
    entries = [build_entry(lm, task, cfg, template, progress) for task in progress(tasks, desc="ELICIT library")]
    prompt_emb = torch.stack([encoder(e.prompts).float().cpu() for e in entries])  # (T, P, E)
    query_emb = encoder([q for e in entries for q in e.queries]).float().cpu()
    pairs = training_pairs([e.queries for e in entries], [len(e.prompts) for e in entries], cfg.seed)
    net = train_retriever(query_emb, prompt_emb.flatten(0, 1), pairs, cfg, progress)
    first, last = net[0], net[3]
    assert isinstance(first, nn.Linear) and isinstance(last, nn.Linear)  # the retriever's input and output layers
    library = Library(
        vectors=torch.stack([e.vector for e in entries]), layers=torch.tensor([e.layer for e in entries]),
        sweep=torch.stack([e.sweep for e in entries]), prompt_emb=prompt_emb,
        w_in=first.weight.detach().clone(), b_in=first.bias.detach().clone(),
        w_out=last.weight.detach()[0].clone(), b_out=last.bias.detach().clone(), held_out=torch.zeros(0))
    with torch.no_grad():
        held = [(t, q) for t, e in enumerate(entries) for q in e.held_out]
        scores = library.entry_scores(encoder([q for _, q in held]).float().cpu())
    own = torch.tensor([t for t, _ in held])
    library.held_out = scores[torch.arange(len(held)), own]
    library.info = {
        "entries": unique_names([e.name for e in entries]), "domains": [t.name for t in tasks],
        "config": asdict(cfg), "encoder": encoder_name,
        "n_training_queries": len(query_emb), "n_pairs": len(pairs), "n_held_out": len(held),
        "held_out_top1": float((scores.argmax(-1) == own).float().mean()),
        "templates": [t.prompt(template).to_json() for t in tasks],
        "dtype": dtype_name(lm.dtype), "build_s": time.perf_counter() - t0,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    return library
