"""Zero-shot: the bare query in the template, nothing injected (the reference every ratio is taken against)."""

from __future__ import annotations

from dataclasses import dataclass

from icr_app.core.strings import folder_strings
from icr_app.methods.base import BuildContext, Method, MethodSpec


@dataclass(frozen=True)
class ZeroShotConfig:
    """Zero-shot has nothing to set."""


class ZeroShotMethod(Method):
    name = "zero-shot"


def build(ctx: BuildContext, config: ZeroShotConfig) -> ZeroShotMethod:
    return ZeroShotMethod(ctx.lm, ctx.answering)


SPEC = MethodSpec(name="zero-shot", title="Zero-shot", kind="baseline", instant=True, config=ZeroShotConfig,
                  build=build, description="the bare query in the template",
                  strings=folder_strings(__file__))
