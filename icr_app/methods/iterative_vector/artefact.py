"""A built set of iterative vectors and its artefact file (`methods.state`): tensors `vectors` and `norms`,
`IterativeVectorMeta` as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from icr_app.methods.state import BuiltMeta, BuiltState, axes


@dataclass(kw_only=True)
class IterativeVectorMeta(BuiltMeta):
    """How the vectors were extracted, and the strength they are added with when answering."""

    strength: float  # the edit's scale at answer time (0: zero-shot exactly)
    extraction_strength: float  # the scale of the running vectors inside the extraction prompts
    episodes: int
    demos: int  # demonstrations per extraction prompt
    update_every: int
    rows: list[str]  # what each row of `vectors` is added at: one per label (or "demo"), then "query"

    def check(self, shapes: dict[str, tuple[int, ...]]) -> None:
        super().check(shapes)
        if len(self.rows) != shapes["vectors"][1]:
            raise ValueError(f"{len(self.rows)} row names for {shapes['vectors'][1]} rows of vectors")


@dataclass
class IterativeVectorState(BuiltState):
    """Vectors (L, R, d) added to each layer's attention output, the last row at the query's answer position,
    the others at demonstrations' (extraction only); norms (U, L, R): their norms after each of the U updates."""

    KIND = "iterative-vector"
    TITLE = "iterative vector"
    META = IterativeVectorMeta

    vectors: torch.Tensor = field(metadata=axes("layers", "rows", "hidden"))
    norms: torch.Tensor = field(metadata=axes("updates", "layers", "rows"))
    meta: IterativeVectorMeta
    fingerprint: str

    @property
    def query_vectors(self) -> torch.Tensor:
        """(L, d): what answering adds, at the query's last token."""
        return self.vectors[:, -1]
