"""Prompt templates and the two prompt formats (docs/scoring.md); demonstrations are sampled in tasks.

A `Template` says what a query and a demonstration say (`query`, `sep`); its `format` says how that text reaches
the model: "plain" is the text itself, "chat" is the same query as a user turn through the tokenizer's own chat
template, each demonstration a user turn answered by an assistant turn. Every prompt of every method and
analysis is made here, so one setting changes them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from icr_app.core.errors import UserError

SHOTS = 10  # demonstrations per few-shot prompt (evaluate keeps at least this many training examples)

PromptFormat = Literal["plain", "chat"]
PROMPT_FORMATS: tuple[PromptFormat, ...] = ("plain", "chat")
_ANSWER = "\x00answer\x00"  # a stand-in answer, to read what a chat template writes after one


class Labelled(Protocol):
    """A demonstration as a template reads it: an input and its answer (a task's `Example`). Stated here rather
    than imported, because tasks carry a Template: prompts is the leaf of core's task modules."""

    @property
    def input(self) -> str: ...

    @property
    def output(self) -> str: ...


class PromptFormatError(UserError):
    """A prompt format the model cannot take (no chat template), or a built file used under the other format."""


@dataclass(frozen=True)
class ChatFormat:
    """A tokenizer's own chat template, rendering turns as the model was tuned to read them.

    `answer_end` is what the template writes after an assistant's answer (e.g. "<|im_end|>\\n"); `drop` is the
    BOS text the template writes that the tokenizer adds again itself (Gemma's "<bos>"): it is left out of the
    text, so tokenising a prompt, as every runner does, with special tokens gives one BOS, not two."""

    tokenizer: Any
    answer_end: str
    drop: str

    @classmethod
    def of(cls, tokenizer: Any) -> ChatFormat:
        """`tokenizer`'s chat format; PromptFormatError when it has no chat template."""
        if not getattr(tokenizer, "chat_template", None):
            raise PromptFormatError("prompt.no_chat_template", model=getattr(tokenizer, "name_or_path", "") or "?")
        bos = tokenizer.bos_token
        adds_bos = bos is not None and tokenizer("a")["input_ids"][:1] == [tokenizer.bos_token_id]
        answered = tokenizer.apply_chat_template(
            [{"role": "user", "content": "q"}, {"role": "assistant", "content": _ANSWER}], tokenize=False)
        return cls(tokenizer, answered.split(_ANSWER, 1)[1], bos if adds_bos else "")

    def render(self, turns: list[tuple[str, str]], generation_prompt: bool) -> str:
        """(role, text) turns as the chat template writes them, up to the assistant's turn when
        `generation_prompt`."""
        text = self.tokenizer.apply_chat_template([{"role": role, "content": content} for role, content in turns],
                                                  add_generation_prompt=generation_prompt, tokenize=False)
        return text.removeprefix(self.drop) if self.drop else text


@dataclass(frozen=True)
class Template:
    """`query` must end where the answer starts; `format` is how the text reaches the model (`PROMPT_FORMATS`).

    Plain: a demonstration is the query plus ` {y}` and `sep`, and an answer starts with a space. Chat: the query
    is a user turn and a demonstration's answer an assistant turn, so an answer starts right after the assistant's
    generation prompt, with no space. A chat template renders through the tokenizer it is bound to
    (`for_tokenizer`; `Answering` and every `Method` bind theirs); the format alone is what files record."""

    query: str = "Input: {x}\nOutput:"
    sep: str = "\n\n"
    format: PromptFormat = "plain"
    chat: ChatFormat | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if "{x}" not in self.query:
            raise ValueError("the template must contain {x} where the input goes")
        if self.format not in PROMPT_FORMATS:
            raise ValueError(f"unknown prompt format {self.format!r}; formats: {', '.join(PROMPT_FORMATS)}")

    def in_format(self, prompt_format: PromptFormat, tokenizer: Any) -> Template:
        """This template in `prompt_format`, bound to `tokenizer` (PromptFormatError when it has no chat
        template and chat is asked for)."""
        return replace(self, format=prompt_format, chat=None).for_tokenizer(tokenizer)

    def for_tokenizer(self, tokenizer: Any) -> Template:
        """This template ready to render for `tokenizer`: a chat one bound to its chat template."""
        if self.format == "plain" or (self.chat is not None and self.chat.tokenizer is tokenizer):
            return self
        return replace(self, chat=ChatFormat.of(tokenizer))

    def to_json(self) -> dict[str, str]:
        """What a built file records of the template (`Template(**data)` reads it back, unbound)."""
        return {"query": self.query, "sep": self.sep, "format": self.format}

    def query_text(self, x: str) -> str:
        """The query's own text: the whole prompt in plain format, the user's turn in chat."""
        return self.query.replace("{x}", x)

    def input_of(self, prompt: str) -> str | None:
        """The input `x` of the query a plain `prompt` ends with, as this template writes it (`Input: x\nOutput:`
        after any demonstrations); None when the prompt does not end in such a query, or is chat."""
        head, tail = self.query.split("{x}", 1)
        if self.format != "plain" or not prompt.endswith(tail):
            return None
        body = prompt[: len(prompt) - len(tail)]
        if not head:  # the query is its input alone: it starts after the last demonstration
            return body.rsplit(self.sep, 1)[-1]
        at = body.rfind(head)
        return None if at < 0 else body[at + len(head):]

    def answer_text(self, label: str) -> str:
        """The continuation a prompt expects: ' label' after plain's 'Output:', 'label' after the chat template's
        generation prompt (which ends a line)."""
        return label if self.format == "chat" else " " + label

    @property
    def answer_end(self) -> str:
        """What follows an answer in a few-shot prompt: `sep`, or the chat template's end of turn."""
        return self._chat().answer_end if self.format == "chat" else self.sep

    def zero_shot(self, x: str) -> str:
        return self.few_shot([], x)

    def demo(self, ex: Labelled) -> str:
        """One demonstration as a few-shot prompt holds it (plain), or as a conversation of its own (chat)."""
        if self.format == "chat":
            return self._chat().render(self._turns(ex), generation_prompt=False)
        return f"{self.query_text(ex.input)}{self.answer_text(ex.output)}{self.sep}"

    def few_shot(self, demos: Sequence[Labelled], x: str) -> str:
        """The demonstrations, then the query: one text (plain), or one turn each (chat; docs/scoring.md)."""
        if self.format == "chat":
            turns = [turn for d in demos for turn in self._turns(d)]
            return self._chat().render(turns + [("user", self.query_text(x))], generation_prompt=True)
        return "".join(self.demo(d) for d in demos) + self.query_text(x)

    def _turns(self, ex: Labelled) -> list[tuple[str, str]]:
        return [("user", self.query_text(ex.input)), ("assistant", self.answer_text(ex.output))]

    def _chat(self) -> ChatFormat:
        if self.chat is None:  # a template read back from a file: `Method` binds it to the model's tokenizer
            raise RuntimeError("a chat template renders only once bound to a tokenizer (Template.for_tokenizer)")
        return self.chat

