"""Prompts whose every token but the last runs once: the cached prefixes that training and layer sweeps reuse.

SITE trains only what follows the prompt's last prefix token and the task vector patches only the last token, so
each prompt's prefix (all tokens but the last) runs once and its KV cache is kept (`PrefixPool`); each step then
runs only the last token and what follows it (label tries, answers under teacher forcing) over that cache.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers import DynamicCache

from icr_app.core import scoring
from icr_app.core.models import LoadedModel
from icr_app.core.scoring import fits_every_window, label_trie, pad_left, token_logprobs


class PrefixPool:
    """Prompts split into a cached prefix (all tokens but the last) and the last token, left-padded."""

    def __init__(self, lm: LoadedModel, prompts: list[str], batch_size: int = 16) -> None:
        self.lm = lm
        ids = [lm.tokenizer(p, add_special_tokens=True)["input_ids"] for p in prompts]
        self.last = torch.tensor([x[-1] for x in ids], device=lm.device)
        self.prefix_len = torch.tensor([len(x) - 1 for x in ids], device=lm.device)
        width = int(self.prefix_len.max())
        self.mask = (torch.arange(width, device=lm.device)[None, :] >= width - self.prefix_len[:, None]).long()
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []
        if width == 0:
            return
        self.kv_shape = (len(ids), lm.n_kv_heads, width, lm.head_dim)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for s in range(0, len(order), batch_size):
            self._fill(order[s: s + batch_size], [ids[i][:-1] for i in order[s: s + batch_size]])

    @torch.no_grad()
    def _fill(self, rows: list[int], prefixes: list[list[int]]) -> None:
        w = max(len(p) for p in prefixes)
        if w == 0:
            return
        enc = pad_left(self.lm, prefixes)
        cache = DynamicCache(config=self.lm.model.config)
        with self.lm.lock:
            self.lm.model(input_ids=enc.input_ids, attention_mask=enc.attention_mask, position_ids=enc.position_ids,
                          cache=cache, use_cache=True, logits_to_keep=1)
        kv = scoring.cache_kv(cache)
        if not self.keys:  # in each layer's own dtype and device (a model spread over devices keeps its cache so)
            self.keys = [keys.new_zeros(self.kv_shape) for keys, _ in kv]
            self.values = [values.new_zeros(self.kv_shape) for _, values in kv]
        # A sliding-window layer keeps only its last window − 1 positions; the older columns stay zero, and a
        # cache rebuilt from these full-width tensors trims them again and masks by the true length.
        for (keys, values), k, v in zip(kv, self.keys, self.values):
            n = keys.shape[2]
            k[rows, :, -n:] = keys
            v[rows, :, -n:] = values

    def __len__(self) -> int:
        return len(self.last)

    def _run(self, rows: torch.Tensor, steps: torch.Tensor, step_mask: torch.Tensor,
             offsets: torch.Tensor | None = None) -> torch.Tensor:
        """Final hidden states (R, S, D) of `steps` (R, S) after the cached prefixes of `rows` (R,), which may repeat.

        `step_mask` is (R, S), which steps are real (each sees the prefix and the real steps before it), or
        (S, S), which steps each step sees (a tree of continuations); `offsets` (S,) are the steps' positions
        after the prompt's last prefix token (default 0, 1, 2, ...). Without autograd the rows run in groups
        that each copy at most `scoring.CACHE_COPY_BYTES` of cached prefix (with it, the backward would keep
        every group's copy all the same, so the callers bound their passes: `answer_loss.STEP_TOKENS_PER_PASS`)."""
        n = self.rows_per_pass(rows) if not torch.is_grad_enabled() else len(rows)
        if n >= len(rows):
            return self._run_group(rows, steps, step_mask, offsets)
        per_row = offsets is None  # an (R, S) mask goes with its rows; a tree's (S, S) mask is every row's
        return torch.cat([self._run_group(rows[s: s + n], steps[s: s + n], step_mask[s: s + n] if per_row else
                                          step_mask, offsets) for s in range(0, len(rows), n)])

    def rows_per_pass(self, rows: torch.Tensor) -> int:
        """How many of `rows` one pass runs: their longest prefix's keys and values, copied per row, within
        `scoring.CACHE_COPY_BYTES`."""
        m = int(self.prefix_len[rows].max())
        per_row = m * sum(2 * k.shape[1] * k.shape[3] * k.element_size() for k in self.keys)
        return max(1, scoring.CACHE_COPY_BYTES // per_row) if per_row else len(rows)

    def _run_group(self, rows: torch.Tensor, steps: torch.Tensor, step_mask: torch.Tensor,
                   offsets: torch.Tensor | None) -> torch.Tensor:
        m = int(self.prefix_len[rows].max())
        data = [(k[rows.to(k.device), :, -m:], v[rows.to(v.device), :, -m:])  # each layer's device
                for k, v in zip(self.keys, self.values)] if m > 0 else None
        cache = DynamicCache(ddp_cache_data=data, config=self.lm.model.config)
        prefix = self.mask[rows, self.mask.shape[1] - m:]
        if offsets is None:
            offsets = torch.arange(steps.shape[1], device=steps.device)
            mask = torch.cat([prefix, step_mask], 1)
        else:  # given whole as a 4D additive mask, which transformers uses as it is
            r, s = steps.shape
            seen = torch.cat([prefix.bool()[:, None, None, :].expand(r, 1, s, m),
                              step_mask[None, None].expand(r, 1, s, s)], -1)
            dtype = self.lm.model.dtype
            mask = torch.zeros(seen.shape, dtype=dtype, device=steps.device).masked_fill(~seen, torch.finfo(dtype).min)
        pos = self.prefix_len[rows, None] + offsets[None, :]
        return self.lm.adapter.body(input_ids=steps, attention_mask=mask, position_ids=pos, cache=cache,
                                    use_cache=True).last_hidden_state

    def label_logprobs(self, rows: torch.Tensor, seqs: tuple[tuple[int, ...], ...]) -> torch.Tensor:
        """Σ log p(label sequence | prompt) (R, K) for the same K label sequences after every row: the last
        prompt token and the labels' prefix trie (`core.scoring.label_trie`) run once per row, so labels that
        share a prefix share its tokens and no row is repeated per label. A sliding-window layer keeps only
        its last window − 1 keys, which a tree mask cannot address, so when prompt and trie do not fit in
        every window each label runs on its own copy of the row (`sequence_logprobs`)."""
        trie = label_trie(seqs)
        width = int(self.prefix_len[rows].max()) + 1 + len(trie.tokens)
        if not fits_every_window(self.lm, width):
            return self.sequence_logprobs(rows, [seqs] * len(rows))[0]
        dev, n = self.last.device, len(trie.tokens)
        steps = torch.cat([self.last[rows, None], torch.tensor(trie.tokens, dtype=torch.long, device=dev)
                           [None].expand(len(rows), n)], 1)
        sees = torch.eye(n + 1, dtype=torch.bool, device=dev)
        sees[1:, 0] = True  # every trie node follows the last prompt token
        sees[1:, 1:] = trie.visible.to(dev)
        offsets = torch.tensor([0, *(d + 1 for d in trie.depth)], device=dev)
        hidden = self._run(rows, steps, sees, offsets)  # (R, 1 + N, D)
        # each label's first token at step 0 (the last prompt token), then its trie steps
        k = len(seqs)
        positions = torch.cat([torch.zeros(k, dtype=torch.long, device=dev), trie.step_node.to(dev) + 1])
        tokens = torch.tensor([t[0] for t in seqs] + trie.step_token.tolist(), device=dev)
        labels = torch.cat([torch.arange(k, device=dev), trie.step_label.to(dev)])
        lp, _ = token_logprobs(self.lm, hidden, positions, tokens)
        return hidden.new_zeros(len(rows), k, dtype=lp.dtype).index_add(1, labels, lp)

    def last_logits(self, rows: torch.Tensor) -> torch.Tensor:
        """Next-token logits (B, V) after the full prompts of `rows`, computed from their cached prefixes."""
        hidden = self._run(rows, self.last[rows, None], torch.ones_like(rows)[:, None])
        return self.lm.adapter.logits(hidden[:, -1]).float()

    def sequence_logprobs(self, rows: torch.Tensor, seqs: Sequence[Sequence[tuple[int, ...]]],
                          ) -> tuple[torch.Tensor, torch.Tensor]:
        """Σ log p(sequence | prompt) (B, K) for K answer sequences per row (teacher forcing), and whether greedy
        decoding under teacher forcing gets every token of it, (B, K). One pass: each (row, sequence) runs the
        last prompt token and the sequence's tokens but its last, right-padded."""
        k = len(seqs[0])
        flat = [s for per_row in seqs for s in per_row]
        width = max(map(len, flat))
        dev = self.last.device
        steps = torch.full((len(flat), width), int(self.lm.tokenizer.pad_token_id), dtype=torch.long, device=dev)
        targets = torch.zeros_like(steps)
        real = torch.zeros_like(steps, dtype=torch.bool)
        rep = rows.repeat_interleave(k)
        steps[:, 0] = self.last[rep]
        for i, s in enumerate(flat):
            steps[i, 1: len(s)] = torch.tensor(s[:-1], device=dev)
            targets[i, : len(s)] = torch.tensor(s, device=dev)
            real[i, : len(s)] = True
        hidden = self._run(rep, steps, real.long())
        lp, hit = token_logprobs(self.lm, hidden, torch.arange(width, device=dev), targets)
        greedy = (hit | ~real).all(-1)
        return (lp * real).sum(-1).view(len(rows), k), greedy.view(len(rows), k)
