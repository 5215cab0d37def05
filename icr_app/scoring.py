"""Running prompts through the model: label scoring for classification, greedy generation otherwise.

Batches are left-padded, so the last real token of every row sits at position -1; that is where
SITE injects and where the answer's first-token logits are read. An intervention (a context
manager supplied by a method) is active during the prefill of the prompt only; answers are then
scored or decoded from the KV cache without it (DESIGN.md §1, stage 3).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass

import torch
from transformers import DynamicCache

from icr_app.models import LoadedModel
from icr_app.prompts import answer_text


class LabelError(ValueError):
    """The label set cannot be scored (e.g. two labels are the same token sequence)."""


@dataclass
class Encoded:
    input_ids: torch.Tensor  # (B, T), left-padded
    attention_mask: torch.Tensor  # (B, T)

    @property
    def position_ids(self) -> torch.Tensor:
        return (self.attention_mask.cumsum(-1) - 1).clamp(min=0)

    @property
    def lengths(self) -> torch.Tensor:
        return self.attention_mask.sum(-1)


def encode(lm: LoadedModel, prompts: list[str]) -> Encoded:
    """Tokenise and left-pad by hand.

    Asking a fast tokenizer to pad switches padding on in its shared Rust backend, and the next
    unpadded call switches it off again: two threads doing that at once break each other's batches.
    Never asking it to pad keeps the shared tokenizer stateless.
    """
    return pad_left(lm, lm.tokenizer(prompts, add_special_tokens=True)["input_ids"])


def pad_left(lm: LoadedModel, ids: list[list[int]]) -> Encoded:
    """Token id lists as one left-padded batch on the model's device."""
    width = max(map(len, ids))
    input_ids = torch.full((len(ids), width), lm.tokenizer.pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for row, seq in enumerate(ids):
        input_ids[row, width - len(seq):] = torch.tensor(seq, dtype=torch.long)
        mask[row, width - len(seq):] = 1
    return Encoded(input_ids.to(lm.device), mask.to(lm.device))


def prefill(lm: LoadedModel, enc: Encoded, cache: DynamicCache | None = None) -> torch.Tensor:
    """Logits at the last position of each row, (B, V); fills `cache` when given."""
    out = lm.model(
        input_ids=enc.input_ids,
        attention_mask=enc.attention_mask,
        position_ids=enc.position_ids,
        cache=cache,
        use_cache=cache is not None,
        logits_to_keep=1,
    )
    return out.logits[:, -1, :].float()


@dataclass(frozen=True)
class LabelSet:
    """Candidate answers and their token ids; full-sequence scoring when first tokens collide."""

    labels: tuple[str, ...]
    token_ids: tuple[tuple[int, ...], ...]

    @property
    def first_token_unique(self) -> bool:
        firsts = [ids[0] for ids in self.token_ids]
        return len(set(firsts)) == len(firsts)

    @property
    def first_ids(self) -> list[int]:
        return [ids[0] for ids in self.token_ids]


def label_set(lm: LoadedModel, labels: list[str]) -> LabelSet:
    ids = [tuple(lm.tokenizer(answer_text(lab), add_special_tokens=False)["input_ids"]) for lab in labels]
    seen: dict[tuple[int, ...], str] = {}
    for lab, t in zip(labels, ids):
        if not t:
            raise LabelError(f"label '{lab}' tokenises to nothing")
        if t in seen:
            raise LabelError(
                f"labels '{seen[t]}' and '{lab}' tokenise to the same tokens, so the model cannot tell "
                "them apart; rename one of them"
            )
        seen[t] = lab
    return LabelSet(tuple(labels), tuple(ids))


def continuation_logprobs(
    lm: LoadedModel, enc: Encoded, first_logits: torch.Tensor, cache: DynamicCache, ls: LabelSet
) -> torch.Tensor:
    """Sum of log-probs of each label's full token sequence after each prompt, (B, C)."""
    logp0 = torch.log_softmax(first_logits, -1)
    first = torch.tensor(ls.first_ids, device=logp0.device)
    score = logp0[:, first]
    lens = torch.tensor([len(t) for t in ls.token_ids], device=logp0.device)
    width = int(lens.max()) - 1
    if width == 0:
        return score
    b, c = score.shape
    pad = lm.tokenizer.pad_token_id
    cont = torch.full((c, width + 1), pad, dtype=torch.long, device=logp0.device)
    for j, ids in enumerate(ls.token_ids):
        cont[j, : len(ids)] = torch.tensor(ids)
    inputs, targets = cont[:, :-1].repeat(b, 1), cont[:, 1:].repeat(b, 1)
    tmask = (torch.arange(width, device=lens.device)[None, :] < (lens[:, None] - 1)).repeat(b, 1)
    cache.batch_repeat_interleave(c)
    attn = torch.cat([enc.attention_mask.repeat_interleave(c, 0), tmask.long()], dim=1)
    pos = enc.lengths.repeat_interleave(c)[:, None] + torch.arange(width, device=lens.device)[None, :]
    logits = lm.model(
        input_ids=inputs, attention_mask=attn, position_ids=pos, cache=cache, use_cache=True
    ).logits.float()
    lp = torch.log_softmax(logits, -1).gather(-1, targets[..., None])[..., 0]
    return score + (lp * tmask).sum(-1).view(b, c)


@torch.no_grad()
def score_labels(
    lm: LoadedModel, prompts: list[str], ls: LabelSet, ctx: AbstractContextManager
) -> torch.Tensor:
    """Probabilities over the label set, (B, C): first-token logits, or full sequences on collisions."""
    enc = encode(lm, prompts)
    full = not ls.first_token_unique
    cache = DynamicCache(config=lm.model.config) if full else None
    with lm.lock:
        with ctx:
            logits = prefill(lm, enc, cache)
        if full:
            scores = continuation_logprobs(lm, enc, logits, cache, ls)
        else:
            scores = logits[:, ls.first_ids]
    return torch.softmax(scores, -1)


@dataclass
class Generation:
    text: str
    first_token: int


@torch.no_grad()
def generate(
    lm: LoadedModel, prompts: list[str], max_new_tokens: int, ctx: AbstractContextManager
) -> list[Generation]:
    """Greedy decoding until a newline or end of sequence; the intervention touches the prefill only."""
    enc = encode(lm, prompts)
    cache = DynamicCache(config=lm.model.config)
    tok = lm.tokenizer
    b = enc.input_ids.shape[0]
    out = torch.empty((b, 0), dtype=torch.long, device=enc.input_ids.device)
    done = torch.zeros(b, dtype=torch.bool, device=out.device)
    mask, pos = enc.attention_mask, enc.lengths[:, None]
    with lm.lock:
        with ctx:
            logits = prefill(lm, enc, cache)
        for step in range(max_new_tokens):
            nxt = logits.argmax(-1)
            nxt = torch.where(done, torch.full_like(nxt, tok.pad_token_id), nxt)
            out = torch.cat([out, nxt[:, None]], 1)
            text_now = tok.batch_decode(out[:, -1:])
            done |= (nxt == tok.eos_token_id) | torch.tensor(["\n" in t for t in text_now], device=out.device)
            if bool(done.all()) or step == max_new_tokens - 1:
                break
            mask = torch.cat([mask, torch.ones_like(mask[:, :1])], 1)
            logits = lm.model(
                input_ids=nxt[:, None], attention_mask=mask, position_ids=pos + step,
                cache=cache, use_cache=True,
            ).logits[:, -1, :].float()
    gens = []
    for row in out.tolist():
        text = tok.decode(row, skip_special_tokens=True).split("\n")[0]
        gens.append(Generation(text=text, first_token=row[0]))
    return gens


def exact_match(generated: str, target: str) -> bool:
    """DESIGN.md §0: the output, stripped, starts with the target."""
    return generated.strip().startswith(target.strip())


def first_token_id(lm: LoadedModel, target: str) -> int:
    return lm.tokenizer(answer_text(target), add_special_tokens=False)["input_ids"][0]
