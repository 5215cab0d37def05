"""ICR as an evaluation method: the zero-shot prompt, routed attention, no demonstrations at inference.

The router is trained once (icr_train) and reused on any task: the pretrained one from assets/icr by
default, or the folder given as `opts["icr_router"]`.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from icr_app.methods import Method, Progress
from icr_app.models import LoadedModel
from icr_app.prompts import Template
from icr_app.router import Encoder, ICRRouter, load_pretrained_router
from icr_app.tasks import Task


class ICR(Method):
    name = "icr"

    def __init__(self, lm: LoadedModel, train: Task, router: ICRRouter, template: Template | None = None,
                 labels: list[str] | None = None) -> None:
        super().__init__(lm, train, template, labels)
        self.router = router

    def intervention(self, queries: list[str]) -> AbstractContextManager:
        return self.router.intervention(queries)


_ROUTERS: dict[tuple[int, str, int], ICRRouter] = {}


def cached_router(lm: LoadedModel, folder: str | None = None, encoder: Encoder | None = None) -> ICRRouter:
    """Load a router once per (model, folder, encoder); the pretrained one when no folder is given."""
    key = (id(lm), folder or "", id(encoder))
    if key not in _ROUTERS:
        _ROUTERS[key] = ICRRouter.load(folder, lm, encoder) if folder else load_pretrained_router(lm, encoder=encoder)
    return _ROUTERS[key]


def build_icr(lm: LoadedModel, train: Task, template: Template, labels: list[str], opts: dict[str, Any],
              progress: Progress) -> Method:
    """opts: "icr_router" (a router folder; default assets/icr), "icr_encoder" (a stand-in encoder, for tests)."""
    return ICR(lm, train, cached_router(lm, opts.get("icr_router"), opts.get("icr_encoder")), template, labels)
