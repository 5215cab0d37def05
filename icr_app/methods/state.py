"""What a built method keeps, and its one artefact file.

Every method that learns from a task's examples ends with a state: some tensors, a `BuiltMeta` (the task, how
answers are read, how long the build took), and the fingerprint of the model the tensors belong to. That state
is what its artefact file holds (`core.artefacts`), what the app offers to download, and what `icl-lab prebuild`
ships, so saving, loading and the model check live here once (`BuiltState`) and each method only says its kind
and its tensors' axes (`axes`). `StatefulMethod` is a method that answers from one such state
(`method.state`), which is what lets `StatefulMethod.save` and `.load` serve every such method (`stateful_spec`
registers its artefact kind and loader).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import torch

from icr_app.core.artefacts import Artefact, ArtefactError, ArtefactModelError, load_artefact, save_artefact
from icr_app.core.loading import dtype_name
from icr_app.core.models import LoadedModel
from icr_app.core.prompts import Template
from icr_app.core.tasks import TaskKind
from icr_app.methods.base import Answering, Method, MethodSpec

if TYPE_CHECKING:  # annotations only (they are never evaluated), so no runtime dependency
    from typing_extensions import Self

Dim = str | int
"""One axis of a stored tensor: a named size of the model (`model_sizes`), a fixed number, or another name (a free
axis, whose size the state's tensors must agree on)."""


def axes(*dims: Dim, trained: bool = False) -> dict[str, Any]:
    """The metadata of a state's field holding one stored tensor, `field(metadata=axes(...))`: its axes, and
    `trained`: learnt by gradient descent (it counts as the method's trainable parameters). A plain `field(...)`
    call, so a type checker sees a field without a default, as it is."""
    return {"dims": dims, "trained": trained}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def built_fields(lm: LoadedModel, answering: Answering) -> dict[str, Any]:
    """`BuiltMeta`'s fields about how the state answers and the dtype the model was in, as JSON
    (`answering_of` reads the `Answering` back)."""
    return {"kind": answering.kind, "labels": list(answering.labels), "max_new_tokens": answering.max_new_tokens,
            "template": answering.template.to_json(),
            "dtype": dtype_name(lm.dtype)}


def answering_of(fields: dict[str, Any]) -> Answering:
    """The `Answering` that `built_fields` describe (KeyError or TypeError when one is missing or unknown)."""
    return Answering(fields["kind"], tuple(fields["labels"]), Template(**fields["template"]),
                     fields["max_new_tokens"])


class StoredMeta:
    """What a stored state keeps besides its tensors, as strict JSON (a dataclass: `to_json` is its fields)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]  # every subclass is a dataclass

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        """The meta a file's JSON holds; TypeError or KeyError when a field is missing or unknown."""
        return cls(**data)

    def check(self, shapes: dict[str, tuple[int, ...]]) -> None:
        """KeyError, TypeError or ValueError unless these fields make sense with tensors of these shapes."""


@dataclass(kw_only=True)
class BuiltMeta(StoredMeta):
    """What every built method stores besides its tensors: the task it learnt, how it reads answers (so it
    answers without its training data), and how it was built. Subclasses add their own numbers."""

    task: str
    kind: TaskKind
    labels: list[str]  # classification labels; empty for open tasks
    template: dict[str, str]  # `Template.to_json`: its query, separator and prompt format (absent: plain)
    max_new_tokens: int
    build_s: float
    seed: int = 0
    created: str = field(default_factory=_now)
    dtype: str = "float32"  # the model's dtype at build time (files from before it was recorded were all fp32)

    def to_answering(self) -> Answering:
        """The `Answering` these fields describe."""
        return answering_of(asdict(self))

    def check(self, shapes: dict[str, tuple[int, ...]]) -> None:
        self.to_answering()


def model_sizes(lm: LoadedModel) -> dict[str, int]:
    """The model's sizes that stored tensors are shaped by (the names `axes` axes use)."""
    return {"layers": lm.n_layers, "heads": lm.n_heads, "head_dim": lm.head_dim,
            "hidden": lm.model.config.hidden_size}


def _shape_text(shapes: dict[str, tuple[int, ...]]) -> str:
    return ", ".join(f"{name} {'×'.join(map(str, shape)) or 'scalar'}" for name, shape in shapes.items())


class StoredState:
    """Tensors (fp32, CPU), a `meta` and the model `fingerprint`, saved as one artefact of KIND.

    Subclasses are dataclasses declaring each tensor as `field(metadata=axes(...))`, its axes as model sizes
    (`model_sizes`: "layers", "heads", "head_dim", "hidden") or fixed numbers, so one declaration serves both
    checks: a file's tensors must agree with each other (load, without a model) and with the loaded model
    (`check_model`). `BuiltState` is a built method's; a state that answers nothing by itself (ICR's router,
    which any task's ICR method holds) is a `StoredState` of its own.
    """

    KIND: ClassVar[str]  # the artefact kind
    TITLE: ClassVar[str]  # how messages name it: "this {TITLE} was built for model ..."
    META: ClassVar[type[StoredMeta]]
    OTHER_MODEL: ClassVar[str] = "artefact.built_for_other_model"  # the error code of a mismatch (core.errors)
    meta: StoredMeta
    fingerprint: str
    __dataclass_fields__: ClassVar[dict[str, Any]]  # every subclass is a dataclass, which `fields` reads

    if TYPE_CHECKING:
        def __init__(self, **fields: Any) -> None: ...  # each subclass's dataclass __init__, by field name

    @classmethod
    def tensor_dims(cls) -> dict[str, tuple[Dim, ...]]:
        """Each stored tensor's axes, as its `axes` declares them."""
        return {f.name: f.metadata["dims"] for f in fields(cls) if "dims" in f.metadata}

    def stored_tensors(self) -> dict[str, torch.Tensor]:
        return {name: getattr(self, name).float() for name in self.tensor_dims()}

    def n_stored(self) -> int:
        """The numbers it keeps besides the frozen model (a method's `stored_parameters`)."""
        return sum(t.numel() for t in self.stored_tensors().values())

    def n_trained(self) -> int:
        """The numbers gradient descent learnt (a method's `trainable_parameters`)."""
        return sum(getattr(self, f.name).numel() for f in fields(self) if f.metadata.get("trained"))

    def meta_json(self) -> dict[str, Any]:
        return self.meta.to_json()

    @classmethod
    def from_artefact(cls, art: Artefact) -> Self:
        """The state a verified file holds; KeyError, TypeError or ValueError when something is missing."""
        return cls(**{name: art.tensors[name] for name in cls.tensor_dims()}, meta=cls.META.from_json(art.meta),
                   fingerprint=art.fingerprint)

    def shapes(self) -> dict[str, tuple[int, ...]]:
        return {name: tuple(getattr(self, name).shape) for name in self.tensor_dims()}

    def expected_shapes(self, lm: LoadedModel) -> dict[str, tuple[int, ...]]:
        """What the tensors' shapes must be for `lm`: an axis named by a model size takes it; an axis of another
        name (a free one, such as the entries of a library) keeps its size, which `check_consistent` checks."""
        sizes = model_sizes(lm)
        return {name: tuple(d if isinstance(d, int) else sizes.get(d, size) for d, size in zip(dims, shape))
                for (name, dims), shape in zip(self.tensor_dims().items(), self.shapes().values())}

    def check_consistent(self) -> None:
        """ValueError unless the tensors have their declared axes and agree with each other (one size per name)."""
        sizes: dict[str, int] = {}
        declared = self.tensor_dims()
        for name, shape in self.shapes().items():
            dims = declared[name]
            if len(shape) != len(dims) or any(size != (d if isinstance(d, int) else sizes.setdefault(d, size))
                                              for size, d in zip(shape, dims)):
                raise ValueError(f"shapes {_shape_text(self.shapes())}, but {name} should be "
                                 f"{'×'.join(map(str, dims))}")

    def check_model(self, lm: LoadedModel) -> None:
        """A state only makes sense in the model that produced it: same fingerprint, same shapes."""
        found, expected = self.shapes(), self.expected_shapes(lm)
        if self.fingerprint != lm.fingerprint or found != expected:
            ours, theirs = (f" ({_shape_text(s)})" if s else "" for s in (found, expected))
            raise ArtefactModelError(self.OTHER_MODEL, what=self.TITLE, found=self.fingerprint, found_shapes=ours,
                                     loaded=lm.fingerprint, loaded_shapes=theirs)

    def save(self, path: str | Path) -> Path:
        return save_artefact(path, self.KIND, self.stored_tensors(), self.meta_json(), self.fingerprint)

    @classmethod
    def load(cls, path: str | Path, lm: LoadedModel | None = None) -> Self:
        """Read and verify a file of this kind (`ArtefactError` when it is incomplete or inconsistent); with
        `lm`, refuse one made for another model (`ArtefactModelError`)."""
        art = load_artefact(path, cls.KIND, None if lm is None else lm.fingerprint)
        try:
            state = cls.from_artefact(art)
            state.check_consistent()
            state.meta.check(state.shapes())
        except (KeyError, TypeError, ValueError) as err:
            raise ArtefactError("artefact.inconsistent", file=Path(path).name, what=cls.TITLE, err=str(err)) from None
        if lm is not None:
            state.check_model(lm)
        return state


class BuiltState(StoredState):
    """A built method's state: its meta a `BuiltMeta`, which says how it answers (`BuiltMeta.to_answering`)."""

    META: ClassVar[type[BuiltMeta]]
    meta: BuiltMeta


class StatefulMethod(Method):
    """A method that answers from one built state, `self.state`: what its artefact holds and what it is
    rebuilt from (`load`). It refuses a state made for another model; its parameter counts are the state's."""

    STATE: ClassVar[type[BuiltState]]

    def __init__(self, lm: LoadedModel, state: BuiltState) -> None:
        state.check_model(lm)
        super().__init__(lm, state.meta.to_answering())
        self.state = state
        self.build_s = state.meta.build_s
        self.stored_parameters, self.trainable_parameters = state.n_stored(), state.n_trained()

    def save(self, path: str | Path) -> Path:
        return self.state.save(path)

    @classmethod
    def load(cls, path: str | Path, lm: LoadedModel) -> Self:
        """The method a file describes, ready to answer on `lm`; refuses a file made for another model."""
        return cls(lm, cls.STATE.load(path, lm))


def stateful_spec(method: type[StatefulMethod], **spec: Any) -> MethodSpec:
    """The registry entry of a method that answers from a built state: named as the method (the key its built
    copies are kept under), saved and loaded through its state, so the app and `prebuild` treat all alike."""
    return MethodSpec(name=method.name, load=method.load, artefact=method.STATE.KIND, **spec)
