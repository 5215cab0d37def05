"""ICL prompts with their token roles: label words, formatting, text and the final (target) position.

Positions come from the tokenizer's character offsets matched against the character spans of each
demonstration's label and input, found in the prompt's text in order, so they hold for labels of several tokens,
any template in either prompt format (a chat template's turn markers are formatting) and any tokenizer merges
at the boundaries. Token `i` is a label token of demo `k` when its span overlaps
the label's characters; an input token when it overlaps the input; formatting otherwise (template
text, separators, special tokens).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from icr_app.core.models import LoadedModel
from icr_app.core.prompts import Template
from icr_app.core.scoring import LabelError, label_set
from icr_app.core.tasks import Example, Task, sample_demos


@dataclass(frozen=True)
class AnchorPrompt:
    """One ICL prompt, tokenized, with the positions each anchors experiment needs."""

    text: str
    input_ids: tuple[int, ...]
    tokens: tuple[str, ...]  # each token decoded on its own, for display
    demos: tuple[Example, ...]
    query: Example
    label_tokens: tuple[tuple[int, ...], ...]  # per demo, the token positions of its label
    format_positions: tuple[int, ...]
    prefix_len: int  # tokens before the query's own text begins (the demonstrations)
    template: Template  # the template and prompt format it was built in

    @property
    def label_positions(self) -> list[int]:
        return sorted(p for toks in self.label_tokens for p in toks)

    @property
    def target(self) -> int:
        return len(self.input_ids) - 1

    def __len__(self) -> int:
        return len(self.input_ids)


def _overlaps(tok: tuple[int, int], span: tuple[int, int]) -> bool:
    return tok[0] < span[1] and span[0] < tok[1]


def build_prompt(lm: LoadedModel, demos: list[Example], query: Example, template: Template) -> AnchorPrompt:
    """`Template.few_shot`'s prompt, with its label and input character spans: each demonstration's query text,
    then its answer followed by what ends an answer (`Template.answer_end`), found in order."""
    template = template.for_tokenizer(lm.tokenizer)
    text = template.few_shot(demos, query.input)
    x_at = template.query.index("{x}")
    label_spans, input_spans, at = [], [], 0
    for d in demos:
        at = text.index(template.query_text(d.input), at)
        input_spans.append((at + x_at, at + x_at + len(d.input)))
        answer = template.answer_text(d.output)
        at = text.index(answer + template.answer_end, at + len(template.query_text(d.input))) + len(answer)
        label_spans.append((at - len(d.output), at))
    prefix_chars = text.index(template.query_text(query.input), at)
    input_spans.append((prefix_chars + x_at, prefix_chars + x_at + len(query.input)))
    enc = lm.tokenizer(text, add_special_tokens=True, return_offsets_mapping=True)
    offsets = [tuple(o) for o in enc["offset_mapping"]]
    label_tokens = tuple(
        tuple(i for i, o in enumerate(offsets) if o[1] > o[0] and _overlaps(o, span)) for span in label_spans
    )
    if any(not toks for toks in label_tokens):
        raise LabelError("label.unmatched")
    taken = {p for toks in label_tokens for p in toks}
    fmt = tuple(
        i for i, o in enumerate(offsets)
        if i not in taken and not any(o[1] > o[0] and _overlaps(o, s) for s in input_spans)
    )
    prefix_len = next((i for i, o in enumerate(offsets) if o[1] > prefix_chars), len(offsets))
    return AnchorPrompt(
        text=text,
        input_ids=tuple(enc["input_ids"]),
        tokens=tuple(lm.tokenizer.batch_decode([[i] for i in enc["input_ids"]])),
        demos=tuple(demos),
        query=query,
        label_tokens=label_tokens,
        format_positions=fmt,
        prefix_len=prefix_len,
        template=template,
    )


def sample_prompts(
    lm: LoadedModel, train: Task, queries: list[Example], template: Template, shots: int | None, seed: int
) -> list[AnchorPrompt]:
    """One prompt per query; demos class-balanced, seeded per query; `shots=None` means one per class."""
    k = len(train.labels) if shots is None else shots
    if k < 1:
        raise ValueError("the anchors analyses need at least one demonstration per prompt (label words)")
    out = []
    for i, q in enumerate(queries):
        rng = random.Random(f"{seed}:{i}:{q.input}")
        out.append(build_prompt(lm, sample_demos(train, k, rng, exclude_input=q.input), q, template))
    return out


def first_label_ids(lm: LoadedModel, labels: list[str], template: Template) -> torch.Tensor:
    """First answer token of each label in `template`'s format; the anchors analyses score these, so they must
    differ."""
    ls = label_set(lm, labels, template)
    if not ls.first_token_unique:
        raise LabelError("label.anchors_first_token")
    return torch.tensor(ls.first_ids, device=lm.device)


def label_loss(logits: torch.Tensor, label_ids: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the gold labels among the label words' first tokens; logits (B, V), targets (B,)."""
    return F.cross_entropy(logits[:, label_ids].to(torch.promote_types(logits.dtype, torch.float32)), targets)
