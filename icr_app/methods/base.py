"""What every way of adapting the model implements, and what a builder is given.

A method says which prompt a query gets (`prompt`) and what, if anything, to change inside the model during
that prompt's prefill (`intervention`). Running, batching, scoring and timing are shared (`Method.predict`),
so methods differ only in what they really change.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from icr_app.core.models import LoadedModel
from icr_app.core.progress import Cancelled, Progress, no_progress
from icr_app.core.prompts import SHOTS, PromptFormat, PromptFormatError, Template
from icr_app.core.scoring import Intervention, exact_match, generate, label_set, no_intervention, score_labels
from icr_app.core.strings import Strings
from icr_app.core.tasks import Task, TaskKind

MAX_NEW_TOKENS = 24


@dataclass(frozen=True)
class Answering:
    """How answers are read: the task kind, the label set (classification), the template (its format too), the
    answer length."""

    kind: TaskKind
    labels: tuple[str, ...]
    template: Template
    max_new_tokens: int

    @classmethod
    def of(cls, lm: LoadedModel, task: Task, template: Template | None = None,
           labels: list[str] | None = None, prompt_format: PromptFormat | None = None) -> Answering:
        """`task`'s answers in `template` (default: the task's own prompt) in `prompt_format` (default: the
        template's), bound to `lm`'s tokenizer (PromptFormatError for chat without a chat template)."""
        prompt = task.prompt(template)
        prompt = prompt.in_format(prompt_format or prompt.format, lm.tokenizer)
        answers = [prompt.answer_text(y) for y in dict.fromkeys(task.outputs)]  # distinct, one batched call
        longest = max(map(len, lm.tokenizer(answers, add_special_tokens=False)["input_ids"]))
        labels = (labels or task.labels) if task.kind == "classification" else []
        return cls(task.kind, tuple(labels), prompt, min(longest + 2, MAX_NEW_TOKENS))

    def check_format(self, what: str, built: PromptFormat) -> None:
        """Refuse to answer in this format with something `what` made on `built` prompts (ICR's router, ELICIT's
        library): what it learnt from the model's states under one format does not carry to the other."""
        if built != self.template.format:
            raise PromptFormatError("prompt.other_format", what=what, built=built, asked=self.template.format)


@dataclass
class BuildContext:
    """What a builder gets: the model, the examples to learn from, how answers are read, and the run's settings."""

    lm: LoadedModel
    train: Task
    answering: Answering
    seed: int = 0
    shots: int = SHOTS  # demonstrations per few-shot prompt, for the methods that show the model ICL prompts
    progress: Progress = field(default=no_progress)


@dataclass
class Prediction:
    query: str
    prompt: str
    prediction: str
    generated: str
    prompt_tokens: int
    label_probs: dict[str, float] | None = None
    first_token: int | None = None


class Method:
    """Zero-shot behaviour; subclasses override `prompt` and/or `intervention`.

    `stored_parameters` counts what the method keeps besides the frozen model (vectors, weights, router);
    `trainable_parameters` what it trained to get them (0 when nothing is trained).
    """

    name = "zero-shot"
    stored_parameters = 0
    trainable_parameters = 0
    build_s = 0.0  # how long its build took, set by whoever built it
    shipped = False  # loaded from the package's prebuilt files (`icr_app.prebuilt`), whose answers it shares

    def __init__(self, lm: LoadedModel, answering: Answering) -> None:
        self.lm = lm
        # a template read back from a file knows its format only: it renders through this model's tokenizer
        self.template = answering.template.for_tokenizer(lm.tokenizer)
        self.answering = replace(answering, template=self.template)
        self.kind = answering.kind
        self.labels = list(answering.labels)
        self.label_set = label_set(lm, self.labels, self.template) if self.kind == "classification" else None
        self.max_new_tokens = answering.max_new_tokens
        # a chat answer ends with the end of turn, which need not be the tokenizer's end of sequence (Gemma's)
        end = self.template.answer_end if self.template.format == "chat" else ""
        self.stop_id = lm.tokenizer(end, add_special_tokens=False)["input_ids"][0] if end else None

    def prompt(self, x: str) -> str:
        return self.template.zero_shot(x)

    def intervention(self, queries: list[str]) -> Intervention:
        """The change for one batch's prefill, whose rows are these queries, in order (entered under `lm.lock`)."""
        return no_intervention()

    def decode_intervention(self, queries: list[str]) -> Intervention:
        """The change while an open task's answer is generated after the prefill (none by default)."""
        return no_intervention()

    def predict(self, queries: list[str], batch_size: int = 16, progress: Progress = no_progress,
                ) -> list[Prediction]:
        """Predictions for queries, batched by prompt length (less padding) and returned in order."""
        prompts = [self.prompt(x) for x in queries]
        n_tok = [len(ids) for ids in self.lm.tokenizer(prompts)["input_ids"]]
        order = sorted(range(len(prompts)), key=lambda i: n_tok[i])
        batches = [order[s: s + batch_size] for s in range(0, len(order), batch_size)]
        preds: list[Prediction | None] = [None] * len(prompts)
        for idx in progress(batches):
            batch_prompts = [prompts[i] for i in idx]
            intervention = self.intervention([queries[i] for i in idx])
            if self.label_set is not None:
                probs = score_labels(self.lm, batch_prompts, self.label_set, intervention)
                for row, i in zip(probs.tolist(), idx):
                    best = max(range(len(row)), key=row.__getitem__)
                    preds[i] = Prediction(
                        query=queries[i], prompt=prompts[i], prediction=self.labels[best],
                        generated=self.labels[best], prompt_tokens=n_tok[i],
                        label_probs=dict(zip(self.labels, row)),
                        first_token=self.label_set.first_ids[best],
                    )
            else:
                during = self.decode_intervention([queries[i] for i in idx])
                gens = generate(self.lm, batch_prompts, self.max_new_tokens, intervention, during, self.stop_id)
                for g, i in zip(gens, idx):
                    preds[i] = Prediction(
                        query=queries[i], prompt=prompts[i], prediction=g.text.strip(),
                        generated=g.text, prompt_tokens=n_tok[i], first_token=g.first_token,
                    )
        return preds  # type: ignore[return-value]

    def save(self, path: str | Path) -> Path:
        """Write what the build learnt to one artefact file (`icr_app.load` reads it back); TypeError for a method
        that keeps nothing of its own (zero-shot, few-shot)."""
        raise TypeError(f"{self.name} keeps no built state to save")

    @contextmanager
    def applied(self, queries: Sequence[str] = ()) -> Iterator[None]:
        """The method's change on the caller's own `lm.model(...)` and `lm.model.generate(...)` calls inside the
        block, as `predict` applies it: a pass with no filled KV cache (a prefill) runs with
        `intervention(queries)`, a pass after it (a decoding step) with `decode_intervention(queries)`.

        `queries` are the query texts of the batch, one per row, for a method that reads them (ICR routes by
        them; icr_app/methods/icr/README.md); the prompt is the caller's (`prompt(x)` is the one `predict` uses);
        batches are left-padded, as the method changes each row's last token. The model's lock is held for the whole
        block, so ICL Lab's attention function is in force and no other ICL Lab call runs meanwhile."""
        queries = list(queries)
        one_pass = ExitStack()  # the intervention of the pass under way, closed when it ends

        def before(module: Any, args: tuple, kwargs: dict[str, Any]) -> tuple[tuple, dict[str, Any]]:
            cache = kwargs.get("cache", kwargs.get("past_key_values"))  # transformers 5's name, or its old one
            prefill = cache is None or cache.get_seq_length() == 0
            change = self.intervention(queries) if prefill else self.decode_intervention(queries)
            return args, {**kwargs, **one_pass.enter_context(change)}

        def after(*_: Any) -> None:
            one_pass.close()

        model = self.lm.model
        with self.lm.lock:
            hooks = [model.register_forward_pre_hook(before, with_kwargs=True),
                     model.register_forward_hook(after, always_call=True)]
            try:
                yield
            finally:
                for hook in hooks:
                    hook.remove()
                one_pass.close()


def is_correct(pred: Prediction, target: str) -> bool:
    """Label match for classification, docs/scoring.md's prefix exact match for open tasks."""
    if pred.label_probs is not None:
        return pred.prediction == target
    return exact_match(pred.generated, target)


Kind = Literal["baseline", "implicit", "fine-tuning"]
KINDS: tuple[Kind, ...] = ("baseline", "implicit", "fine-tuning")  # the order the registry lists them in


class BuildError(ValueError):
    """A method that cannot be built for a task (a refusal, or an error while it learnt); `cause` says why."""

    def __init__(self, entry: str, cause: Exception) -> None:
        super().__init__(str(cause))
        self.entry, self.cause = entry, cause


@dataclass(frozen=True)
class BuildControl:
    """A method tab's own Build button: one integer config field (`field`, e.g. "steps") set by a slider from `low`
    to `high`, and an upload that loads a built file. The labels are the app's string keys: the slider's
    (`label`), the button's, the upload's and the progress text's (`busy`)."""

    field: str
    low: int
    high: int
    label: str
    button: str
    upload: str
    busy: str


@dataclass(frozen=True)
class QueryFigures:
    """Figures of a built method on the visitor's query, redrawn with every answer: `figures(method, query, say)
    -> tuple[Figure, ...]` ("module:function"), one figure per string key in `labels` (their titles on the page).
    They take the method, not its state: what a method does to one query may need the model (ICR's router reads
    the query through the method's encoder)."""

    figures: str
    labels: tuple[str, ...]


@dataclass(frozen=True)
class MethodView:
    """How the app shows a method's built state: data only, so the library needs neither gradio nor plotly.

    The functions are named "module:function" and imported only by the app: `figure(state, say) -> Figure` (None:
    no figure of the state alone) and `summary(state, say) -> str`, drawn in the visitor's language by `say`
    (`figures.say.Say`); optionally a `second(state, built, say) -> Figure` and `notes(state, built, say) -> str`
    that read the visitor's other built methods (`built`: method name -> Method), and `query`, figures of the
    visitor's query. `key` prefixes the app's string keys of its tab: "<key>.tab", "<key>.explain", "<key>.figure"
    (with a `figure`) and, with `second`, "<key>.second". `build`: its own Build button, if it offers one."""

    key: str
    figure: str | None
    summary: str
    second: str | None = None
    notes: str | None = None
    build: BuildControl | None = None
    query: QueryFigures | None = None


def build_spec(spec: MethodSpec, lm: LoadedModel, task: Task, config: Any, *, entry: str | None = None,
               answering: Answering | None = None, seed: int = 0, shots: int = SHOTS,
               prompt_format: PromptFormat = "plain", progress: Progress = no_progress) -> Method:
    """Build registered method `spec` from `task` with `config`, its build timed into `build_s` (what
    `methods.build_method` does for a registry entry). Without `answering`, the task's own, in `prompt_format`
    (a PromptFormatError, raised as is, when the model cannot take it). `progress` wraps
    its loops and may stop it (`Cancelled`, raised as is); any other error becomes a `BuildError` naming
    `entry` (default: the method's name)."""
    answering = answering or Answering.of(lm, task, prompt_format=prompt_format)
    ctx = BuildContext(lm, task, answering, seed=int(seed), shots=int(shots), progress=progress)
    t0 = time.perf_counter()
    try:
        method = spec.build(ctx, config)
    except Cancelled:
        raise
    except Exception as err:  # the caller decides: the app and `eval` report it and build the other methods
        raise BuildError(entry or spec.name, err) from err
    method.build_s = time.perf_counter() - t0
    return method


@dataclass(frozen=True)
class Export:
    """A built method as the files a serving stack reads (`icr_app.export`), and those files made elsewhere read
    back as the method (`icr_app.load` of a path that `reads` recognises), when `load` is given."""

    write: Callable[[Method, Path], Path]  # (method, path) -> the path written
    reads: Callable[[Path], bool] | None = None
    load: Callable[[Path, Any], Method] | None = None  # (path, lm) -> the method; refuses what it cannot represent


@dataclass(frozen=True)
class MethodSpec:
    """One registered method.

    build(context, config) -> a ready Method, learnt from `context.train`.
    presets: extra named starting points for the config, asked for as `<name>@<preset>` (e.g. `site@paper`).
    view: how the app shows a built copy (`MethodView`); None for a method the app shows no tab of its own for.
    kind: "baseline" (zero- and few-shot), "implicit" (implicit ICL), or "fine-tuning" (weights trained; shown
    as such in the app).
    """

    name: str
    title: str
    description: str
    config: type
    build: Callable[[BuildContext, Any], Method]
    kind: Kind = "implicit"
    presets: Mapping[str, tuple[str, Callable[[], Any]]] = field(default_factory=dict)
    # The built method at its no-op setting (strength 0), which answers exactly as zero-shot; a method without
    # such a setting has None. tests/test_contract.py checks every registered method against it.
    neutral: Callable[[Method], Method] | None = None
    instant: bool = False  # building costs nothing (no training on the task), so the app builds it per query
    artefact: str | None = None  # the kind of a built method's file (`Method.save`), which `load_method` goes by
    load: Callable[[Path, Any], Method] | None = None  # (path, lm) -> the method; refuses another model's file
    view: MethodView | None = None
    exports: Mapping[str, Export] = field(default_factory=dict)  # format (`methods.FORMATS`) -> its export
    # its words on the page, per language (`core.strings.folder_strings` of its folder): title "method.<name>", its
    # tab's keys (`MethodView`), figure labels; a method without them shows its `title` in English
    strings: Strings = field(default_factory=dict)
