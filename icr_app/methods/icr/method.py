"""ICR as a method: the zero-shot prompt, routed attention, no demonstrations at inference.

The router is trained once (`train`) and reused on any task: the one shipped for the loaded model by
default, or a folder given with `--icr-router`. Nothing is learnt from the user's examples. A built ICR method
saves its router, PIDs and how it reads answers to one artefact file (`ICRMethod.save`, kind "icr"), which
`icr_app.load` reads back like any method's.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

from icr_app.core.artefacts import ArtefactError, load_artefact, save_artefact
from icr_app.core.models import LoadedModel
from icr_app.core.scoring import Intervention
from icr_app.methods.base import Answering, BuildContext, Method
from icr_app.methods.icr.pids import PIDs
from icr_app.methods.icr.router import ICRRouter, find_router, load_pretrained_router, members
from icr_app.methods.state import answering_of, built_fields

ARTEFACT = "icr"
NET = "net."  # the prefix of the router's weights among the file's tensors


@dataclass(frozen=True)
class ICRConfig:
    router: str | None = field(default=None, metadata={
        "help": "router folder (pids.safetensors + router.safetensors), or a folder of such folders where the one "
                "trained for the model is found; default: $ICL_LAB_ROUTERS, else the one shipped for the model"})


class ICRMethod(Method):
    name = "icr"

    def __init__(self, lm: LoadedModel, answering: Answering, router: ICRRouter) -> None:
        super().__init__(lm, answering)
        self.router = router
        self.stored_parameters = sum(p.numel() for p in router.net.parameters()) + router.pids.u_q.numel() \
            + router.pids.u_k.numel()

    def intervention(self, queries: list[str]) -> Intervention:
        return self.router.intervention(queries)

    def save(self, path: str | Path) -> Path:
        """The router (its net and PIDs) and how answers are read, in one file stamped with the model."""
        router = self.router
        tensors = {"u_q": router.pids.u_q, "u_k": router.pids.u_k,
                   **{NET + name: weight for name, weight in router.net.state_dict().items()}}
        meta = {"router": router.net_meta(), "pids": router.pids.meta,
                "answering": built_fields(self.lm, self.answering)}
        return save_artefact(path, ARTEFACT, tensors, meta, self.lm.fingerprint)

    @classmethod
    def load(cls, path: str | Path, lm: LoadedModel) -> ICRMethod:
        """The ICR method a file of `save` holds, on `lm`; refuses a file made for another model."""
        art = load_artefact(path, ARTEFACT, lm.fingerprint, str(lm.device))
        weights = {name.removeprefix(NET): t for name, t in art.tensors.items() if name.startswith(NET)}
        try:
            pids = PIDs(art.tensors["u_q"], art.tensors["u_k"], art.meta["pids"])
            router = ICRRouter.from_weights(lm, pids, weights, art.meta["router"])
            answering = answering_of(art.meta["answering"])
        except (KeyError, TypeError, ValueError, RuntimeError) as err:  # load_state_dict raises RuntimeError
            raise ArtefactError("artefact.inconsistent", file=Path(path).name, what="ICR", err=err) from None
        return cls(lm, answering, router)


def cached_router(lm: LoadedModel, folder: str | None = None) -> ICRRouter:
    """Load a router once per (model, folder); the pretrained one when no folder is given."""
    return lm.memoised(("icr-router", folder or ""),
                       lambda: ICRRouter.load(find_router(lm, folder), lm) if folder else load_pretrained_router(lm))


def build(ctx: BuildContext, config: ICRConfig) -> ICRMethod:
    """The router as it is; refused under a prompt format other than its PIDs' (routers from before the format
    was recorded were all made on plain prompts)."""
    router = cached_router(ctx.lm, config.router)
    ctx.answering.check_format("ICR router", router.pids.meta.get("prompt_format", "plain"))
    return ICRMethod(ctx.lm, ctx.answering, router)


def neutral(method: ICRMethod) -> ICRMethod:
    """The same router with its α scale at 0: no routing bias."""
    r = method.router
    net = copy.deepcopy(r.net)
    for member in members(net):
        member.alpha_scale.fill_(0.0)
    return ICRMethod(method.lm, method.answering, ICRRouter(r.lm, net, r.pids, r.layers, r.rows, r.encoder, r.meta))
