"""The ICR router (icr_app/methods/icr/README.md): a frozen sentence encoder and two small MLPs that give α(x) and γ(x).

α(x) = s·tanh(MLP_α(e(x))) ∈ R^{L_r×r} mixes the PID directions per routed layer (s is the α scale,
annealed during training and frozen after); γ(x) = sigmoid(MLP_γ(e(x))) ∈ R^{L_r×H} gates each head.
The α head's last layer starts at zero, so an untrained router is exactly the zero-shot model and training
departs from it. Several routers trained alike on the same PIDs (different seeds) can be joined into one
ensemble whose routing bias is the mean of theirs (`ensemble_routers`): a single router's transfer to unseen
tasks varies a lot with its seed, and the mean of several is steadier, so the shipped router is such an
ensemble (its MANIFEST says which).
A router is stored as a `RouterState` (`methods.state`: its PIDs and its members' weights as declared tensors,
`RouterMeta` for the rest), one artefact file, `router.safetensors` in a router folder; a built ICR method holds
the same tensors (`ICRState`). `ICRRouter` is a router ready to route on a loaded model.
The encoder is a callable texts -> (B, D) tensor: all-MiniLM-L6-v2 by default (`core.encoder`), any stand-in
in tests.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import torch
from torch import nn

from icr_app.core.artefacts import ArtefactError, artefact_fingerprint
from icr_app.core.encoder import MINILM, Encoder, minilm_encoder
from icr_app.core.loading import dtype_name
from icr_app.core.models import LoadedModel
from icr_app.core.paths import ASSETS
from icr_app.core.prompts import PromptFormat
from icr_app.core.scoring import Intervention
from icr_app.core.seeds import seeded
from icr_app.methods.icr.pids import PIDs
from icr_app.methods.icr.routing import Rope, Routes, Rows, routing
from icr_app.methods.state import StoredMeta, StoredState, axes

FILE = "router.safetensors"
PRETRAINED = ASSETS / "icr"  # one folder per built-in model name
TRAINING_DOMAINS = PRETRAINED / "domains"  # the project-written domains the shipped router was trained on


def last_third(n_layers: int) -> list[int]:
    """The paper's routed layers: the last third (early or all layers collapse in its ablation)."""
    return list(range(n_layers - n_layers // 3, n_layers))


def _mlp(d_in: int, hidden: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, hidden), nn.GELU(), nn.Linear(hidden, d_out))


class RouterNet(nn.Module):
    """The trainable part: embedding -> (α (B, L_r, r), γ (B, L_r, H))."""

    alpha_scale: torch.Tensor  # a buffer (registered below), saved with the weights

    def __init__(self, embed_dim: int, n_routed: int, rank: int, n_heads: int, hidden: int = 256) -> None:
        super().__init__()
        self.shape_alpha, self.shape_gamma = (n_routed, rank), (n_routed, n_heads)
        self.alpha_mlp = _mlp(embed_dim, hidden, n_routed * rank)
        self.gamma_mlp = _mlp(embed_dim, hidden, n_routed * n_heads)
        last = self.alpha_mlp[-1]
        assert isinstance(last, nn.Linear)
        nn.init.zeros_(last.weight)
        nn.init.zeros_(last.bias)
        self.register_buffer("alpha_scale", torch.tensor(1.0))

    def forward(self, emb: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        alpha = self.alpha_scale * torch.tanh(self.alpha_mlp(emb))
        gamma = torch.sigmoid(self.gamma_mlp(emb))
        return alpha.view(-1, *self.shape_alpha), gamma.view(-1, *self.shape_gamma)


class RouterEnsemble(nn.Module):
    """M routers on the same PIDs: embedding -> (α (B, M, L_r, r), γ (B, M, L_r, H)), members on axis 1."""

    def __init__(self, members: list[RouterNet]) -> None:
        super().__init__()
        self.members = nn.ModuleList(members)

    @property
    def alpha_scale(self) -> torch.Tensor:
        first = self.members[0]
        assert isinstance(first, RouterNet)
        return first.alpha_scale

    def forward(self, emb: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        alphas, gammas = zip(*(member(emb) for member in self.members))
        return torch.stack(alphas, 1), torch.stack(gammas, 1)


def members(net: RouterNet | RouterEnsemble) -> list[RouterNet]:
    return list(net.members) if isinstance(net, RouterEnsemble) else [net]  # type: ignore[arg-type]


def joined(nets: list[RouterNet]) -> RouterNet | RouterEnsemble:
    """One net stays a plain RouterNet, so a single router routes with (B, L_r, ·) maps, an ensemble with
    (B, M, L_r, ·)."""
    return nets[0] if len(nets) == 1 else RouterEnsemble(nets)


# Each stored weight and the RouterNet parameter it is: the members stacked on axis 0, and each output layer's
# rows split into (routed layer, direction) for α and (routed layer, head) for γ, so their sizes are checked.
WEIGHTS = {"alpha_w1": "alpha_mlp.0.weight", "alpha_b1": "alpha_mlp.0.bias",
           "alpha_w2": "alpha_mlp.2.weight", "alpha_b2": "alpha_mlp.2.bias",
           "gamma_w1": "gamma_mlp.0.weight", "gamma_b1": "gamma_mlp.0.bias",
           "gamma_w2": "gamma_mlp.2.weight", "gamma_b2": "gamma_mlp.2.bias"}
SPLIT = ("alpha_w2", "alpha_b2", "gamma_w2", "gamma_b2")


def stored_weights(net: RouterNet | RouterEnsemble) -> dict[str, torch.Tensor]:
    """The nets' weights as `RouterTensors` keeps them (fp32, CPU, copies)."""
    nets = members(net)
    out = {}
    for name, key in WEIGHTS.items():
        stacked = torch.stack([n.state_dict()[key].detach().float().cpu() for n in nets])
        split = nets[0].shape_alpha if name.startswith("alpha") else nets[0].shape_gamma
        out[name] = stacked.unflatten(1, split) if name in SPLIT else stacked
    return out


@dataclass
class RouterTensors:
    """A router's tensors: the PIDs of every layer (keys in the k_proj space), and the two MLPs of each of its
    M members (E-d embeddings, hidden width W, L_r routed layers)."""

    u_q: torch.Tensor = field(metadata=axes("layers", "d_q", "rank"))
    u_k: torch.Tensor = field(metadata=axes("layers", "d_k", "rank"))
    alpha_w1: torch.Tensor = field(metadata=axes("members", "width", "embed"))
    alpha_b1: torch.Tensor = field(metadata=axes("members", "width"))
    alpha_w2: torch.Tensor = field(metadata=axes("members", "routed", "rank", "width"))
    alpha_b2: torch.Tensor = field(metadata=axes("members", "routed", "rank"))
    gamma_w1: torch.Tensor = field(metadata=axes("members", "width", "embed"))
    gamma_b1: torch.Tensor = field(metadata=axes("members", "width"))
    gamma_w2: torch.Tensor = field(metadata=axes("members", "routed", "heads", "width"))
    gamma_b2: torch.Tensor = field(metadata=axes("members", "routed", "heads"))

    def router_tensors(self) -> dict[str, torch.Tensor]:
        return {f.name: getattr(self, f.name) for f in fields(RouterTensors)}

    def pids(self, record: dict[str, Any]) -> PIDs:
        """The PIDs, with `record` (`RouterMeta.pids`) as their meta."""
        return PIDs(self.u_q, self.u_k, record)

    def net(self, alpha_scale: float) -> RouterNet | RouterEnsemble:
        """The member nets these weights make (on the CPU, weights copied), each at this α scale."""
        n_members, width, embed = self.alpha_w1.shape
        _, routed, rank, _ = self.alpha_w2.shape
        with torch.device("meta"):  # no initial values to draw: every weight is assigned below
            nets = [RouterNet(embed, routed, rank, self.gamma_w2.shape[2], width) for _ in range(n_members)]
        for i, net in enumerate(nets):
            weights = {key: getattr(self, name)[i].flatten(0, 1) if name in SPLIT else getattr(self, name)[i]
                       for name, key in WEIGHTS.items()}
            net.load_state_dict({**{k: w.float().clone() for k, w in weights.items()},
                                 "alpha_scale": torch.tensor(float(alpha_scale))}, assign=True)
        return joined(nets)


@dataclass(kw_only=True)
class RouterMeta(StoredMeta):
    """How a router routes and how it was made."""

    layers: list[int]  # the routed layers
    rows: Rows  # the query rows biased: "all", or "last" (the answer position)
    alpha_scale: float  # every member's α scale (annealed in training, frozen after)
    pids: dict[str, Any]  # how its PIDs were made: rank "r", "rope", "centred", "prompt_format", domains, ...
    encoder: str = MINILM  # the sentence encoder it reads queries with
    dtype: str = "float32"  # the model's dtype it was trained against
    made: dict[str, Any] = field(default_factory=dict)  # its training (config, domains), or "ensemble_of"

    @property
    def rope(self) -> Rope:
        return self.pids["rope"]

    @property
    def prompt_format(self) -> PromptFormat:
        """The prompts its PIDs were made on (routers from before the format was recorded: plain)."""
        return self.pids.get("prompt_format", "plain")

    def check(self, shapes: dict[str, tuple[int, ...]]) -> None:
        routed, n_layers = shapes["alpha_w2"][1], shapes["u_q"][0]
        if sorted(set(self.layers)) != sorted(self.layers) or len(self.layers) != routed \
                or not all(0 <= layer < n_layers for layer in self.layers):
            raise ValueError(f"routed layers {self.layers}, but the weights route {routed} of {n_layers} layers")
        if self.rows not in ("all", "last") or self.rope not in ("pre", "post"):
            raise ValueError(f"rows {self.rows!r} and rope {self.rope!r}: 'all' or 'last', 'pre' or 'post'")
        if not 0 <= self.alpha_scale < float("inf"):
            raise ValueError(f"the α scale must be a finite number >= 0, not {self.alpha_scale}")


@dataclass
class RouterState(RouterTensors, StoredState):
    """A router as `icr train` and `icr ensemble` write it and as it ships: one file, `router.safetensors`."""

    KIND = "icr-router"
    TITLE = "ICR router"
    META = RouterMeta

    meta: RouterMeta = field(kw_only=True)
    fingerprint: str = field(kw_only=True)


class ICRRouter:
    """A router ready to route on `lm`: its net on the model's device, the PIDs, the encoder and its meta (whose
    α scale the net's buffer overrides: training anneals it there)."""

    def __init__(self, lm: LoadedModel, net: RouterNet | RouterEnsemble, pids: PIDs, meta: RouterMeta,
                 encoder: Encoder | None = None) -> None:
        self.lm, self.net, self.pids, self.meta = lm, net, pids, meta
        self.layers, self.rows = list(meta.layers), meta.rows
        self.encoder = encoder or minilm_encoder(lm.device)
        self.u_q, self.u_k = pids.u_q[self.layers].to(lm.device), pids.u_k[self.layers].to(lm.device)

    @classmethod
    def of(cls, lm: LoadedModel, tensors: RouterTensors, meta: RouterMeta, encoder: Encoder | None = None,
           ) -> ICRRouter:
        """The router these tensors and this meta describe (a `RouterState`'s, an `ICRState`'s), on `lm`."""
        net = tensors.net(meta.alpha_scale).to(lm.device).eval()
        return cls(lm, net, tensors.pids(meta.pids), meta, encoder)

    def embed(self, texts: list[str]) -> torch.Tensor:
        emb = self.encoder(texts).float().to(self.lm.device)
        width = members(self.net)[0].alpha_mlp[0].in_features
        if emb.shape[-1] != width:
            raise ValueError(f"the router reads {width}-d embeddings of {self.meta.encoder}, the encoder gave "
                             f"{emb.shape[-1]}-d: embed the queries with the encoder it was trained with")
        return emb

    def routes(self, alpha: torch.Tensor, gamma: torch.Tensor) -> Routes:
        return Routes(tuple(self.layers), self.u_q, self.u_k, alpha, gamma, self.pids.rope, self.rows)

    @torch.no_grad()
    def route(self, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """α(x) (B, L_r, r) and γ(x) (B, L_r, H) for each text; (B, M, L_r, ·) for an ensemble of M."""
        return self.net(self.embed(texts))

    def intervention(self, texts: list[str]) -> Intervention:
        """Routing for a batch whose rows are these query texts, in order (entered under `lm.lock`)."""
        return routing(self.lm, self.routes(*self.route(texts)))

    def state(self) -> RouterState:
        """What it stores: its PIDs and weights, with its meta at the net's α scale, stamped with the model."""
        meta = replace(self.meta, alpha_scale=float(self.net.alpha_scale), pids=self.pids.meta)
        return RouterState(u_q=self.pids.u_q.float().cpu(), u_k=self.pids.u_k.float().cpu(),
                           **stored_weights(self.net), meta=meta, fingerprint=self.lm.fingerprint)

    def save(self, folder: str | Path) -> Path:
        """The router as a router folder's `router.safetensors` (as `icr train` writes it and routers ship)."""
        return self.state().save(Path(folder) / FILE)

    @classmethod
    def load(cls, folder: str | Path, lm: LoadedModel, encoder: Encoder | None = None) -> ICRRouter:
        """Load a saved router folder; refuses one made for another model (fingerprint) or with other shapes."""
        state = RouterState.load(Path(folder) / FILE, lm)
        return cls.of(lm, state, state.meta, encoder)


def ensemble_routers(routers: list[ICRRouter], made: dict[str, Any] | None = None) -> ICRRouter:
    """One router whose bias is the mean of `routers`' biases; they must differ in their weights only."""
    if not routers:
        raise ValueError("an ensemble needs at least one router")
    first = routers[0]
    for other in routers[1:]:
        same = (other.lm.fingerprint == first.lm.fingerprint and other.layers == first.layers
                and other.rows == first.rows and other.pids.rope == first.pids.rope
                and torch.equal(other.pids.u_q, first.pids.u_q) and torch.equal(other.pids.u_k, first.pids.u_k))
        if not same:
            raise ValueError("ensemble members must share the model, the PIDs, the routed layers and the rows")
    nets = [net for router in routers for net in members(router.net)]
    shapes = [({k: v.shape for k, v in net.state_dict().items()}, float(net.alpha_scale)) for net in nets]
    if any(shape != shapes[0] for shape in shapes):
        raise ValueError("ensemble members must have the same MLP sizes and α scale")
    made = made or {"ensemble_of": [router.meta.made for router in routers]}
    return ICRRouter(first.lm, joined(nets), first.pids, replace(first.meta, made=made), first.encoder)


def ensemble_folders(lm: LoadedModel, folders: list[str | Path], out: str | Path, encoder: Encoder | None = None,
                     alpha_scale: float | None = None) -> ICRRouter:
    """Load the routers saved in `folders`, join them (`ensemble_routers`) and save the ensemble to `out`.

    `alpha_scale` replaces the members' α scale (training ends at 0.8): the mean of members that disagree is
    smaller than any one of them, so the joined router may want a stronger push; None keeps theirs.
    """
    if alpha_scale is not None and not 0 <= alpha_scale < float("inf"):
        raise ValueError(f"the α scale must be a finite number >= 0, not {alpha_scale}")
    routers = [ICRRouter.load(folder, lm, encoder) for folder in folders]
    ensemble = ensemble_routers(routers, {"ensemble_of": [{"source": str(folder), **router.meta.made}
                                                          for folder, router in zip(folders, routers)]})
    if alpha_scale is not None:
        for net in members(ensemble.net):
            net.alpha_scale.fill_(alpha_scale)
    ensemble.save(out)
    return ensemble


def new_router(lm: LoadedModel, pids: PIDs, embed_dim: int, layers: list[int] | None = None, rows: Rows = "last",
               hidden: int = 256, encoder: Encoder | None = None, seed: int = 0) -> ICRRouter:
    """An untrained router (α = 0: the zero-shot model) over `layers` (default: the last third)."""
    layers = last_third(lm.n_layers) if layers is None else layers
    with seeded(seed):  # the layers' default init draws from the global generator
        net = RouterNet(embed_dim, len(layers), pids.rank, lm.n_heads, hidden)
    encoder = encoder or minilm_encoder(lm.device)
    meta = RouterMeta(layers=list(layers), rows=rows, alpha_scale=1.0, pids=pids.meta,
                      encoder=getattr(encoder, "__name__", "custom"), dtype=dtype_name(lm.dtype))
    return ICRRouter(lm, net.to(lm.device), pids, meta, encoder)


def find_router(lm: LoadedModel, folder: str | Path) -> Path:
    """The router for `lm` in `folder`: the folder itself when it holds one, else the subfolder whose router was
    trained for this model (its fingerprint); ArtefactError naming the models it has routers for when none is."""
    folder = Path(folder)
    if (folder / FILE).is_file():
        return folder
    if not folder.is_dir():
        raise ArtefactError("icr.no_folder", folder=str(folder))
    found = {sub: artefact_fingerprint(sub / FILE) for sub in sorted(folder.iterdir()) if (sub / FILE).is_file()}
    for sub, fingerprint in found.items():
        if fingerprint == lm.fingerprint:
            return sub
    there = ", ".join(f"{sub.name} ({fp})" for sub, fp in found.items()) or "none"
    raise ArtefactError("icr.not_in_folder", model=lm.fingerprint, folder=str(folder), there=there,
                        command=f"icl-lab icr train --model {lm.name} --domains ... --out {folder / 'NAME'}")


def pretrained_folder(lm: LoadedModel) -> Path:
    """The router for this model: in the folder $ICL_LAB_ROUTERS names (`find_router`) when set, else the one the
    package ships for a built-in model; ArtefactError when there is none."""
    if os.environ.get("ICL_LAB_ROUTERS"):
        return find_router(lm, os.environ["ICL_LAB_ROUTERS"])
    folder = PRETRAINED / lm.name
    if folder.parent != PRETRAINED or not (folder / FILE).is_file():
        shipped = sorted(p.parent.name for p in PRETRAINED.glob(f"*/{FILE}"))
        raise ArtefactError("icr.not_shipped", model=lm.name, shipped=", ".join(shipped),
                            command=f"icl-lab icr train --model {lm.name} ...")
    return folder


def load_pretrained(lm: LoadedModel) -> RouterState:
    """The router for this model in $ICL_LAB_ROUTERS, or the one shipped in the package (ArtefactError when
    there is none)."""
    return RouterState.load(pretrained_folder(lm) / FILE, lm)
