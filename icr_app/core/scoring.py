"""Running prompts through the model: label scoring for classification, greedy generation otherwise.

Batches are left-padded, so the last real token of every row sits at position -1; that is where
SITE injects and where the answer's first-token logits are read. An intervention (a context
manager supplied by a method) is active during the prefill of the prompt only; answers are then
scored or decoded from the KV cache without it (icr_app/methods/site/README.md, stage 3).

An intervention is a context manager that the runner enters while it holds `LoadedModel.lock`: it may
install hooks for the pass and yields the extra forward keywords of the pass (e.g. an `attention_edit`).
"""

from __future__ import annotations

import copy
import functools
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.checkpoint import checkpoint
from transformers import DynamicCache

from icr_app.core.adapter import Adapter
from icr_app.core.errors import UserError
from icr_app.core.models import LoadedModel
from icr_app.core.prompts import Template

# A pass that runs rows over copies of cached prompts (one per label, per variant) copies at most this much: 16
# few-shot prompts of 1,000 tokens on Gemma-3-270M are 0.6 GB of cache, and a copy per label of 14 is 8 GB.
# Passes with autograd keep every copy for the backward however they are split; their callers bound them.
CACHE_COPY_BYTES = 1 << 30

Intervention = AbstractContextManager[dict[str, Any]]


def no_intervention() -> Intervention:
    return nullcontext({})


class LabelError(UserError):
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


def prefill(lm: LoadedModel, enc: Encoded, cache: DynamicCache | None = None,
            intervention: Intervention | None = None) -> torch.Tensor:
    """Logits at the last position of each row, (B, V), with `intervention` live; fills `cache` when given."""
    with lm.lock, intervention or no_intervention() as extra:
        out = lm.model(
            input_ids=enc.input_ids,
            attention_mask=enc.attention_mask,
            position_ids=enc.position_ids,
            cache=cache,
            use_cache=cache is not None,
            logits_to_keep=1,
            **extra,
        )
    return out.logits[:, -1, :].float()


@dataclass(frozen=True)
class LabelSet:
    """Candidate answers and their token ids; full-sequence scoring when first tokens collide.

    `end_ids` holds, per label, the token that ends the answer (the first token of what the template writes
    after an answer: its separator, or the chat template's end of turn). Full-sequence scores include it, so a
    label that is a prefix of another (" 1" of " 10") is "1 and stop" rather than a free lower bound, and either
    can win.
    """

    labels: tuple[str, ...]
    token_ids: tuple[tuple[int, ...], ...]
    end_ids: tuple[int, ...] | None = None

    @property
    def first_token_unique(self) -> bool:
        firsts = [ids[0] for ids in self.token_ids]
        return len(set(firsts)) == len(firsts)

    @property
    def first_ids(self) -> list[int]:
        return [ids[0] for ids in self.token_ids]

    @property
    def scored_ids(self) -> tuple[tuple[int, ...], ...]:
        """Each label's full scored sequence: its tokens, then its end token when there is one."""
        if self.end_ids is None:
            return self.token_ids
        return tuple(ids + (end,) for ids, end in zip(self.token_ids, self.end_ids))


def label_set(lm: LoadedModel, labels: list[str], template: Template | None = None) -> LabelSet:
    """The labels' token ids as answers in `template`'s format (LabelError when two are the same tokens); with a
    template, also each label's end token (`Template.answer_end`). No template: plain answers, no end tokens."""
    answer = (template or Template()).answer_text
    ids = [tuple(lm.tokenizer(answer(lab), add_special_tokens=False)["input_ids"]) for lab in labels]
    seen: dict[tuple[int, ...], str] = {}
    for lab, t in zip(labels, ids):
        if not t:
            raise LabelError("label.no_tokens", label=lab)
        if t in seen:
            raise LabelError("label.same_tokens", a=seen[t], b=lab)
        seen[t] = lab
    end_ids: tuple[int, ...] | None = None
    end = template and template.answer_end
    if end:
        alone = lm.tokenizer(end, add_special_tokens=False)["input_ids"][0]
        ends = []
        for lab, t in zip(labels, ids):  # the tokenizer may merge the label's end with the separator
            joined = lm.tokenizer(answer(lab) + end, add_special_tokens=False)["input_ids"]
            ends.append(joined[len(t)] if tuple(joined[: len(t)]) == t and len(joined) > len(t) else alone)
        end_ids = tuple(ends)
    return LabelSet(tuple(labels), tuple(ids), end_ids)


@dataclass(frozen=True)
class LabelTrie:
    """The scored label sequences' shared prefixes, packed as one continuation that each prompt runs once.

    Node i is a distinct proper prefix t[:k] (k >= 1) of some scored sequence t: its input is t[k-1] at
    position prompt length + k - 1, and its logits give the next token after that prefix. Labels sharing a
    prefix ("General Motors" / "General Mills", " 1" / " 10") share its node, so a row runs as many tokens as
    there are distinct prefixes, not labels × longest label, and the prompt's cache is never repeated. Node i
    attends to the prompt and to the nodes on its own path (`visible`: its ancestors and itself); `step_*`
    list, for every scored token after the first, (label, node, target token).
    """

    tokens: tuple[int, ...]
    depth: tuple[int, ...]
    visible: torch.Tensor  # (N, N) bool
    step_label: torch.Tensor  # (P,)
    step_node: torch.Tensor  # (P,)
    step_token: torch.Tensor  # (P,)


@functools.lru_cache(maxsize=64)
def label_trie(sequences: tuple[tuple[int, ...], ...]) -> LabelTrie:
    node_of: dict[tuple[int, ...], int] = {}
    parent: list[int] = []
    tokens: list[int] = []
    steps: list[tuple[int, int, int]] = []
    for j, ids in enumerate(sequences):
        for k in range(1, len(ids)):
            prefix = ids[:k]
            if prefix not in node_of:
                node_of[prefix] = len(tokens)
                parent.append(node_of.get(prefix[:-1], -1))
                tokens.append(prefix[-1])
            steps.append((j, node_of[prefix], ids[k]))
    n = len(tokens)
    visible = torch.zeros((n, n), dtype=torch.bool)
    depth = []
    for i in range(n):
        a, d = i, 0
        while a >= 0:
            visible[i, a] = True
            a, d = parent[a], d + 1
        depth.append(d - 1)
    cols = list(zip(*steps)) if steps else [(), (), ()]
    lab, node, tok = (torch.tensor(col, dtype=torch.long) for col in cols)
    return LabelTrie(tuple(tokens), tuple(depth), visible, lab, node, tok)


def fits_every_window(lm: LoadedModel, width: int) -> bool:
    """Whether `width` positions stay inside every sliding-window layer's cache (which keeps window − 1 keys),
    so a whole 4D mask over them addresses every key."""
    windows = [lm.adapter.sliding_window(layer) for layer in range(lm.n_layers)]
    return all(w is None or width < w - 1 for w in windows)


def token_logprobs(lm: LoadedModel, hidden: torch.Tensor, positions: torch.Tensor, tokens: torch.Tensor,
                   chunk: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    """log p(tokens[p] | the prefix up to positions[p]) (B, P), and whether that token is the greedy one (B, P),
    from final hidden states (B, S, D); `tokens` is (P,) for every row alike, or (B, P).

    The logits are made `chunk` positions at a time: a label trie's (B, P, V) logits at once (30 labels: ~90
    positions of a 49k vocabulary per row) would be held several times over, and under autograd (SITE's
    training) each chunk is recomputed in backward (activation checkpointing) instead of kept."""
    tokens = tokens.expand(hidden.shape[0], -1)
    lps, hits = [], []
    for s in range(0, len(positions), chunk):
        part = (lm.adapter, hidden[:, positions[s: s + chunk]], tokens[:, s: s + chunk])
        if torch.is_grad_enabled() and hidden.requires_grad:
            lp, hit = checkpoint(_chunk_logprobs, *part, use_reentrant=False)
        else:
            lp, hit = _chunk_logprobs(*part)
        lps.append(lp)
        hits.append(hit)
    return torch.cat(lps, 1), torch.cat(hits, 1)


def _chunk_logprobs(adapter: Adapter, hidden: torch.Tensor, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    logits = adapter.logits(hidden).float()
    picked = logits.gather(-1, tokens[..., None])[..., 0]
    return picked - torch.logsumexp(logits, -1), picked >= logits.amax(-1)


def continuation_logprobs(
    lm: LoadedModel, enc: Encoded, first_logits: torch.Tensor, cache: DynamicCache, ls: LabelSet
) -> torch.Tensor:
    """Sum of log-probs of each label's scored sequence after each prompt, (B, C).

    The labels' prefix trie runs once per prompt against its cache, with a 4D additive mask (B, 1, N, T + N)
    that lets each node see its row's prompt and its own path only, at positions prompt length + depth; the
    mask is given whole, so transformers uses it as it is. A sliding-window layer keeps only its last window
    − 1 keys, which that mask cannot address, so when prompt and trie do not fit in every window each label's
    sequence runs on its own copy of the cache instead (`_per_label_logprobs`).
    """
    logp0 = torch.log_softmax(first_logits, -1)
    score = logp0[:, ls.first_ids]
    trie = label_trie(ls.scored_ids)
    if not trie.tokens:
        return score
    width = enc.input_ids.shape[1] + len(trie.tokens)
    if not fits_every_window(lm, width):
        return score + _per_label_logprobs(lm, enc, cache, ls)
    dev, b, n = logp0.device, score.shape[0], len(trie.tokens)
    inputs = torch.tensor(trie.tokens, device=dev)[None].expand(b, n)
    pos = enc.lengths[:, None] + torch.tensor(trie.depth, device=dev)[None]
    seen = torch.cat([enc.attention_mask.bool()[:, None, None, :].expand(b, 1, n, -1),
                      trie.visible.to(dev)[None, None].expand(b, 1, n, n)], dim=-1)
    dtype = lm.model.dtype
    mask = torch.zeros(seen.shape, dtype=dtype, device=dev).masked_fill(~seen, torch.finfo(dtype).min)
    hidden = lm.adapter.body(input_ids=inputs, attention_mask=mask, position_ids=pos, cache=cache,
                             use_cache=True).last_hidden_state  # (B, N, D)
    lp, _ = token_logprobs(lm, hidden, trie.step_node.to(dev), trie.step_token.to(dev))
    return score.index_add(1, trie.step_label.to(dev), lp)


def cache_kv(cache: DynamicCache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Each layer's cached (keys, values), (B, H_kv, T, d_h), once a prefill has filled `cache`: every family ICL
    Lab supports caches attention in every layer (transformers types a cache layer more widely)."""
    kv = []
    for layer in cache.layers:
        keys, values = getattr(layer, "keys", None), getattr(layer, "values", None)
        if keys is None or values is None:
            raise RuntimeError(f"{type(layer).__name__}: a cache layer without keys and values (not filled?)")
        kv.append((keys, values))
    return kv


def _per_label_logprobs(lm: LoadedModel, enc: Encoded, cache: DynamicCache, ls: LabelSet) -> torch.Tensor:
    """Log-probs (B, C) of each label's scored tokens after the first, one row per (prompt, label), the cache
    repeated per label (as many labels a pass as CACHE_COPY_BYTES holds copies of it); transformers builds
    every layer's mask (sliding windows included)."""
    seqs = ls.scored_ids
    size = sum((k.numel() + v.numel()) * k.element_size() for k, v in cache_kv(cache))
    per_pass = max(1, CACHE_COPY_BYTES // size)
    if per_pass >= len(seqs):
        return _label_group_logprobs(lm, enc, cache, seqs)
    return torch.cat([_label_group_logprobs(lm, enc, copy.deepcopy(cache), seqs[j: j + per_pass])
                      for j in range(0, len(seqs), per_pass)], 1)


def _label_group_logprobs(lm: LoadedModel, enc: Encoded, cache: DynamicCache,
                          seqs: tuple[tuple[int, ...], ...]) -> torch.Tensor:
    """`_per_label_logprobs` for the labels `seqs`, over `cache`, which it repeats in place."""
    dev = enc.input_ids.device
    lens = torch.tensor([len(t) for t in seqs], device=dev)
    width = int(lens.max()) - 1
    b, c = enc.input_ids.shape[0], len(seqs)
    if width == 0:  # single-token labels: nothing after the first token to score
        return torch.zeros(b, c, device=dev)
    cont = torch.full((c, width + 1), lm.tokenizer.pad_token_id, dtype=torch.long, device=dev)
    for j, ids in enumerate(seqs):
        cont[j, : len(ids)] = torch.tensor(ids)
    inputs, targets = cont[:, :-1].repeat(b, 1), cont[:, 1:].repeat(b, 1)
    tmask = (torch.arange(width, device=dev)[None, :] < (lens[:, None] - 1)).repeat(b, 1)
    cache.batch_repeat_interleave(c)
    attn = torch.cat([enc.attention_mask.repeat_interleave(c, 0), tmask.long()], dim=1)
    pos = enc.lengths.repeat_interleave(c)[:, None] + torch.arange(width, device=dev)[None, :]
    hidden = lm.adapter.body(input_ids=inputs, attention_mask=attn, position_ids=pos, cache=cache,
                             use_cache=True).last_hidden_state
    lp, _ = token_logprobs(lm, hidden, torch.arange(width, device=dev), targets)
    return (lp * tmask).sum(-1).view(b, c)


@torch.no_grad()
def score_labels(
    lm: LoadedModel, prompts: list[str], ls: LabelSet, intervention: Intervention | None = None
) -> torch.Tensor:
    """Probabilities over the label set, (B, C): first-token logits, or full sequences on collisions."""
    enc = encode(lm, prompts)
    full = not ls.first_token_unique
    cache = DynamicCache(config=lm.model.config) if full else None
    with lm.lock:
        logits = prefill(lm, enc, cache, intervention)
        if cache is not None:  # full
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
    lm: LoadedModel, prompts: list[str], max_new_tokens: int, intervention: Intervention | None = None,
    decode_intervention: Intervention | None = None, stop: int | None = None,
) -> list[Generation]:
    """Greedy decoding until a newline, end of sequence or the token `stop` (a chat template's end of turn, which
    need not be the tokenizer's end of sequence); `intervention` touches the prefill only, `decode_intervention`
    every generated token's step (each step's input is that one token)."""
    enc = encode(lm, prompts)
    cache = DynamicCache(config=lm.model.config)
    tok = lm.tokenizer
    b = enc.input_ids.shape[0]
    out = torch.empty((b, 0), dtype=torch.long, device=enc.input_ids.device)
    done = torch.zeros(b, dtype=torch.bool, device=out.device)
    mask, pos = enc.attention_mask, enc.lengths[:, None]
    with lm.lock:
        logits = prefill(lm, enc, cache, intervention)
        with decode_intervention or no_intervention() as during:  # entered after the prefill, never during it
            for step in range(max_new_tokens):
                nxt = logits.argmax(-1)
                nxt = torch.where(done, torch.full_like(nxt, tok.pad_token_id), nxt)
                out = torch.cat([out, nxt[:, None]], 1)
                text_now = tok.batch_decode(out[:, -1:])
                done |= (nxt == tok.eos_token_id) | (nxt == stop) | torch.tensor(["\n" in t for t in text_now],
                                                                                 device=out.device)
                if bool(done.all()) or step == max_new_tokens - 1:
                    break
                mask = torch.cat([mask, torch.ones_like(mask[:, :1])], 1)
                logits = lm.model(
                    input_ids=nxt[:, None], attention_mask=mask, position_ids=pos + step,
                    cache=cache, use_cache=True, **during,
                ).logits[:, -1, :].float()
    gens = []
    for row in out.tolist():
        answer = row[: row.index(stop)] if stop in row else row
        text = tok.batch_decode([answer], skip_special_tokens=True)[0].split("\n")[0]
        gens.append(Generation(text=text, first_token=row[0]))
    return gens


def exact_match(generated: str, target: str) -> bool:
    """docs/scoring.md: the output, stripped, starts with the target."""
    return generated.strip().startswith(target.strip())


def first_token_id(lm: LoadedModel, target: str, template: Template | None = None) -> int:
    """The first token of `target` as an answer in `template`'s format (no template: plain)."""
    return lm.tokenizer((template or Template()).answer_text(target), add_special_tokens=False)["input_ids"][0]
