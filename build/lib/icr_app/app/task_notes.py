"""A note under the task's description when the model cannot read the task's language (the Chinese tasks on an
English-only model such as SmolLM2-135M), so a weak answer is not taken for a weak method.

Whether a model reads Chinese is measured, not listed: a vocabulary built on Chinese text holds a common
character in about one token, while a byte-level English vocabulary splits each one into two or three bytes.
"""

from __future__ import annotations

from icr_app.app.i18n import say
from icr_app.core.models import LoadedModel
from icr_app.core.tasks import Task

CHINESE_SHARE = 0.3  # a task is Chinese when this share of its inputs' characters are CJK ideographs
TOKENS_PER_CHARACTER = 1.5  # more tokens than this per Chinese character: the model never learnt Chinese words


def _ideographs(text: str) -> int:
    return sum("\u4e00" <= c <= "\u9fff" for c in text)


def tokens_per_character(lm: LoadedModel, texts: list[str]) -> float:
    """How many tokens the model's tokenizer spends on one Chinese character of `texts` (all but ideographs
    removed, so spaces and Latin letters do not dilute it)."""
    han = ["".join(c for c in text if _ideographs(c)) for text in texts]
    n_chars = sum(map(len, han))
    n_tokens = sum(len(lm.tokenizer(h, add_special_tokens=False)["input_ids"]) for h in han if h)
    return n_tokens / max(n_chars, 1)


def is_chinese(task: Task) -> bool:
    text = "".join(task.inputs)
    return _ideographs(text) >= CHINESE_SHARE * len(text)


def task_note(lm: LoadedModel, task: Task, description: str) -> str:
    """The task's description, and why its answers are weak when it is Chinese and the model cannot read it."""
    if not is_chinese(task):
        return description
    ratio = tokens_per_character(lm, task.inputs)
    if ratio <= TOKENS_PER_CHARACTER:
        return description
    return f"{description}\n\n{say('english_only', model=lm.name, ratio=ratio)}"
