"""The ICR router (icr_app/methods/icr/README.md): a frozen sentence encoder and two small MLPs that give α(x) and γ(x).

α(x) = s·tanh(MLP_α(e(x))) ∈ R^{L_r×r} mixes the PID directions per routed layer (s is the α scale,
annealed during training and frozen after); γ(x) = sigmoid(MLP_γ(e(x))) ∈ R^{L_r×H} gates each head.
The α head's last layer starts at zero, so an untrained router is exactly the zero-shot model and training
departs from it. Several routers trained alike on the same PIDs (different seeds) can be joined into one
ensemble whose routing bias is the mean of theirs (`ensemble_routers`): a single router's transfer to unseen
tasks varies a lot with its seed, and the mean of several is steadier, so the shipped router is such an
ensemble (its MANIFEST says which).
The encoder is a callable texts -> (B, D) tensor: all-MiniLM-L6-v2 by default (`core.encoder`), any stand-in
in tests.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch
from torch import nn

from icr_app.core.artefacts import ArtefactError, artefact_fingerprint, load_artefact, save_artefact
from icr_app.core.encoder import Encoder, minilm_encoder
from icr_app.core.loading import dtype_name
from icr_app.core.models import LoadedModel
from icr_app.core.paths import ASSETS
from icr_app.core.scoring import Intervention
from icr_app.core.seeds import seeded
from icr_app.methods.icr.pids import PIDs
from icr_app.methods.icr.routing import Routes, Rows, routing

KIND = "router"
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

    def __init__(self, embed_dim: int, n_routed: int, rank: int, n_heads: int, hidden: int = 256) -> None:
        super().__init__()
        self.shape_alpha, self.shape_gamma = (n_routed, rank), (n_routed, n_heads)
        self.alpha_mlp = _mlp(embed_dim, hidden, n_routed * rank)
        self.gamma_mlp = _mlp(embed_dim, hidden, n_routed * n_heads)
        nn.init.zeros_(self.alpha_mlp[-1].weight)
        nn.init.zeros_(self.alpha_mlp[-1].bias)
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
        return self.members[0].alpha_scale

    def forward(self, emb: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        alphas, gammas = zip(*(member(emb) for member in self.members))
        return torch.stack(alphas, 1), torch.stack(gammas, 1)


def members(net: RouterNet | RouterEnsemble) -> list[RouterNet]:
    return list(net.members) if isinstance(net, RouterEnsemble) else [net]


def joined(nets: list[RouterNet]) -> RouterNet | RouterEnsemble:
    """One net stays a plain RouterNet, so what `save` writes for it is what `load` rebuilds."""
    return nets[0] if len(nets) == 1 else RouterEnsemble(nets)


class ICRRouter:
    """A router ready to use: the net, the PIDs of its routed layers, the encoder and the routing choices."""

    def __init__(self, lm: LoadedModel, net: RouterNet | RouterEnsemble, pids: PIDs, layers: list[int],
                 rows: Rows = "last", encoder: Encoder | None = None, meta: dict[str, Any] | None = None) -> None:
        self.lm, self.net, self.pids, self.layers, self.rows = lm, net, pids, list(layers), rows
        self.encoder = encoder or minilm_encoder(lm.device)
        self.meta = meta or {}
        self.u_q, self.u_k = pids.u_q[self.layers].to(lm.device), pids.u_k[self.layers].to(lm.device)

    def embed(self, texts: list[str]) -> torch.Tensor:
        return self.encoder(texts).float().to(self.lm.device)

    def routes(self, alpha: torch.Tensor, gamma: torch.Tensor) -> Routes:
        return Routes(tuple(self.layers), self.u_q, self.u_k, alpha, gamma, self.pids.rope, self.rows)

    @torch.no_grad()
    def route(self, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """α(x) (B, L_r, r) and γ(x) (B, L_r, H) for each text; (B, M, L_r, ·) for an ensemble of M."""
        return self.net(self.embed(texts))

    def intervention(self, texts: list[str]) -> Intervention:
        """Routing for a batch whose rows are these query texts, in order (entered under `lm.lock`)."""
        return routing(self.lm, self.routes(*self.route(texts)))

    def net_meta(self) -> dict[str, Any]:
        """What rebuilds the net around its weights (`from_weights`), with how the router was made."""
        net = members(self.net)[0]
        # The dtype the router was trained against: kept from its file when saved again (an ensemble, say).
        return {"dtype": dtype_name(self.lm.dtype), **self.meta, "layers": self.layers, "rows": self.rows,
                "rank": self.pids.rank, "n_heads": net.shape_gamma[1], "embed_dim": net.alpha_mlp[0].in_features,
                "hidden": net.alpha_mlp[0].out_features, "alpha_scale": float(net.alpha_scale),
                "members": len(members(self.net))}

    def save(self, folder: str | Path) -> None:
        """The router as a folder (pids.safetensors + router.safetensors), as `icr train` writes it and routers
        ship; a built ICR method saves it in one file instead (`ICRMethod.save`)."""
        self.pids.save(folder, self.lm.fingerprint)
        save_artefact(Path(folder) / FILE, KIND, dict(self.net.state_dict()), self.net_meta(), self.lm.fingerprint)

    @classmethod
    def from_weights(cls, lm: LoadedModel, pids: PIDs, weights: dict[str, torch.Tensor], meta: dict[str, Any],
                     encoder: Encoder | None = None) -> ICRRouter:
        """The router whose net `meta` (`net_meta`) describes, with these weights, on `lm`'s device; KeyError or
        RuntimeError when they do not fit together."""
        nets = [RouterNet(meta["embed_dim"], len(meta["layers"]), meta["rank"], meta["n_heads"], meta["hidden"])
                for _ in range(meta.get("members", 1))]
        net = joined(nets)
        net.load_state_dict(weights)
        net.to(lm.device).eval()
        return cls(lm, net, pids, meta["layers"], meta["rows"], encoder, meta)

    @classmethod
    def load(cls, folder: str | Path, lm: LoadedModel, encoder: Encoder | None = None) -> ICRRouter:
        """Load a saved router folder; refuses one made for another model (fingerprint) or with other shapes."""
        pids = PIDs.load(folder, lm)
        art = load_artefact(Path(folder) / FILE, KIND, lm.fingerprint, str(lm.device))
        return cls.from_weights(lm, pids, art.tensors, art.meta, encoder)


def ensemble_routers(routers: list[ICRRouter], meta: dict[str, Any] | None = None) -> ICRRouter:
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
    return ICRRouter(first.lm, joined(nets), first.pids, first.layers, first.rows, first.encoder,
                     meta or {"ensemble_of": [router.meta for router in routers]})


def ensemble_folders(lm: LoadedModel, folders: list[str | Path], out: str | Path, encoder: Encoder | None = None,
                     alpha_scale: float | None = None) -> ICRRouter:
    """Load the routers saved in `folders`, join them (`ensemble_routers`) and save the ensemble to `out`.

    `alpha_scale` replaces the members' α scale (training ends at 0.8): the mean of members that disagree is
    smaller than any one of them, so the joined router may want a stronger push; None keeps theirs.
    """
    if alpha_scale is not None and not 0 <= alpha_scale < float("inf"):
        raise ValueError(f"the α scale must be a finite number >= 0, not {alpha_scale}")
    routers = [ICRRouter.load(folder, lm, encoder) for folder in folders]
    ensemble = ensemble_routers(routers, {"ensemble_of": [{"source": str(folder), **router.meta}
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
    net = net.to(lm.device)
    return ICRRouter(lm, net, pids, layers, rows, encoder)


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


def load_pretrained_router(lm: LoadedModel, encoder: Encoder | None = None) -> ICRRouter:
    """The router for this model in $ICL_LAB_ROUTERS, or the one shipped in the package (ArtefactError when
    there is none)."""
    return ICRRouter.load(pretrained_folder(lm), lm, encoder)
