"""ICR as a method: the zero-shot prompt, routed attention, no demonstrations at inference.

The router is trained once (`train`) and reused on any task: the one shipped for the loaded model by
default, or a folder given with `--icr-router`. Nothing is learnt from the user's examples: building ICR on a
task binds the router to how the task's answers are read. A built ICR method's state (`ICRState`) holds the
router's tensors, its meta and that answering, saved as one artefact file (kind "icr") like any built method's.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from icr_app.core.models import LoadedModel
from icr_app.core.scoring import Intervention
from icr_app.methods.base import Answering, BuildContext
from icr_app.methods.icr.router import (
    FILE,
    ICRRouter,
    RouterMeta,
    RouterState,
    RouterTensors,
    find_router,
    load_pretrained,
)
from icr_app.methods.state import BuiltMeta, BuiltState, StatefulMethod, built_fields


@dataclass(frozen=True)
class ICRConfig:
    router: str | None = field(default=None, metadata={
        "help": "router folder (holding router.safetensors), or a folder of such folders where the one trained for "
                "the model is found; default: $ICL_LAB_ROUTERS, else the one shipped for the model"})


@dataclass(kw_only=True)
class ICRMeta(BuiltMeta):
    router: RouterMeta  # the router's own meta (routed layers, rows, α scale, PIDs, how it was made)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ICRMeta:
        return cls(**{**data, "router": RouterMeta.from_json(data["router"])})

    def check(self, shapes: dict[str, tuple[int, ...]]) -> None:
        super().check(shapes)
        self.router.check(shapes)


@dataclass
class ICRState(RouterTensors, BuiltState):
    """The router (its PIDs, weights and meta) and how the task's answers are read."""

    KIND = "icr"
    TITLE = "ICR"
    META = ICRMeta

    meta: ICRMeta = field(kw_only=True)
    fingerprint: str = field(kw_only=True)


class ICRMethod(StatefulMethod):
    name = "icr"
    STATE = ICRState
    state: ICRState

    def __init__(self, lm: LoadedModel, state: ICRState) -> None:
        super().__init__(lm, state)
        self.router = ICRRouter.of(lm, state, state.meta.router)

    @classmethod
    def of(cls, lm: LoadedModel, router: RouterState, answering: Answering, task: str = "", seed: int = 0,
           ) -> ICRMethod:
        """`router` answering as `answering` says (for `task`): what building ICR on a task makes."""
        meta = ICRMeta(task=task, **built_fields(lm, answering), build_s=0.0, seed=seed, router=router.meta)
        return cls(lm, ICRState(**router.router_tensors(), meta=meta, fingerprint=router.fingerprint))

    def intervention(self, queries: list[str]) -> Intervention:
        return self.router.intervention(queries)


def router_state(lm: LoadedModel, folder: str | None = None) -> RouterState:
    """The router for `lm` in `folder` (`find_router`; default: `load_pretrained`), read once per model and folder.
    It is kept on the model itself and holds no reference to it, so it goes with the model."""
    def load() -> RouterState:
        return RouterState.load(find_router(lm, folder) / FILE, lm) if folder else load_pretrained(lm)

    return lm.memoised(("icr-router", folder or ""), load)


def build(ctx: BuildContext, config: ICRConfig) -> ICRMethod:
    """The router as it is, bound to the task's answering; refused under a prompt format other than its PIDs'."""
    router = router_state(ctx.lm, config.router)
    ctx.answering.check_format("ICR router", router.meta.prompt_format)
    return ICRMethod.of(ctx.lm, router, ctx.answering, ctx.train.name, ctx.seed)


def neutral(method: ICRMethod) -> ICRMethod:
    """The same router with its α scale at 0: no routing bias."""
    state = method.state
    return ICRMethod(method.lm, replace(state, meta=replace(state.meta, router=replace(state.meta.router,
                                                                                      alpha_scale=0.0))))
