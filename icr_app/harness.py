"""Built methods inside lm-evaluation-harness: `harness_lm(method)` is the harness's `HFLM` on the method's model,
its requests answered with the method's change where ICL Lab's own runners make it (docs/elsewhere.md).

A loglikelihood request (context, continuation) runs as ICL Lab scores an answer: the context's prefill under
`method.intervention` (the last-token methods act at the context's last token, ICV and I2CL at each of its
positions), then the continuation's tokens from that KV cache under `method.decode_intervention` (none for most
methods; LoRA's update is in every pass). A `loglikelihood_rolling` request is a run of such requests, whose
context is the harness's prefix token (its first window) or the window's overlap. `generate_until` runs the
harness's own generation inside `method.applied`: the prefill changed, the decoding steps as the method says.
Methods that read the query text (ICR's router, ELICIT's retriever, ATV's generator) read the input `x` of a context
that ends as the method's own prompt does (`Input: x\nOutput:`), and the whole context the harness wrote otherwise.

lm-eval is the `[harness]` extra: this module imports it only when a harness model is made.
"""

from __future__ import annotations

import copy
import functools
import importlib
from collections.abc import Callable, Sequence
from typing import Any

import torch
from transformers import DynamicCache, PreTrainedTokenizerBase

from icr_app.core.errors import UserError
from icr_app.core.models import LoadedModel
from icr_app.core.scoring import Encoded, pad_left, prefill, token_logprobs
from icr_app.methods.base import Method

EXTRA = 'pip install "icl-lab[harness]"'  # what installs lm-eval with ICL Lab
Request = tuple[Any, list[int], list[int]]  # the harness's (strings or None, context ids, continuation ids)


class HarnessError(UserError):
    """lm-eval is not installed, or a method the harness cannot run (one whose change is its prompt)."""


def lm_eval_module(name: str = "lm_eval") -> Any:
    """Module `name` of lm-eval, imported, or a HarnessError naming the extra that installs lm-eval."""
    try:
        return importlib.import_module(name)
    except ImportError as err:
        if err.name is None or not err.name.startswith("lm_eval"):
            raise  # lm-eval is there, and something it needs is broken: say that, not "install it"
        raise HarnessError("harness.no_lm_eval", install=EXTRA) from err


def harness_lm(method: Method, *, batch_size: int = 16, max_length: int | None = None) -> Any:
    """An lm-eval `HFLM` (the harness's LM API: `loglikelihood`, `loglikelihood_rolling`, `generate_until`)
    answering with built `method` applied, `batch_size` requests a pass; `max_length`: the longest input (default:
    the model's). The model and tokenizer handed in are left as they were (the harness gets a copy of the
    tokenizer, whose padding it changes). HarnessError without lm-eval, or for a method whose change is its prompt
    (few-shot: the harness's own `num_fewshot` is that)."""
    if type(method).prompt is not Method.prompt:
        raise HarnessError("harness.prompt_method", method=method.name)
    return _method_lm_class()(method, batch_size, max_length)


def plain_lm(lm: LoadedModel, *, batch_size: int = 16, max_length: int | None = None) -> Any:
    """The harness's own `HFLM` on `lm`'s model, nothing applied: what zero- and few-shot run through."""
    hflm = lm_eval_module("lm_eval.models.huggingface").HFLM
    return _unchanged_mode(lm, lambda: hflm(pretrained=lm.model, tokenizer=_own_tokenizer(lm.tokenizer),
                                             batch_size=batch_size, max_length=max_length))


def _own_tokenizer(tokenizer: PreTrainedTokenizerBase) -> PreTrainedTokenizerBase:
    """A copy the harness may pad with: padding a fast tokenizer switches its shared backend's state, which
    ICL Lab's runners never do (`core.scoring.encode`)."""
    return copy.deepcopy(tokenizer)


def _unchanged_mode(lm: LoadedModel, make: Callable[[], Any]) -> Any:
    """`make()`, with the model's train/eval mode put back: HFLM's constructor switches the model to eval."""
    training = lm.model.training
    try:
        return make()
    finally:
        lm.model.train(training)


@functools.cache
def _method_lm_class() -> type:
    """The HFLM subclass, made once lm-eval is imported (the library loads without it)."""
    hflm = lm_eval_module("lm_eval.models.huggingface").HFLM

    class MethodLM(hflm):  # type: ignore[misc, valid-type]
        def __init__(self, method: Method, batch_size: int, max_length: int | None) -> None:
            lm = method.lm
            _unchanged_mode(lm, lambda: super(MethodLM, self).__init__(
                pretrained=lm.model, tokenizer=_own_tokenizer(lm.tokenizer), batch_size=batch_size,
                max_length=max_length))
            self.method = method

        def _loglikelihood_tokens(self, requests: list[Request], disable_tqdm: bool = False,
                                  override_bs: int | None = None) -> list[tuple[float, bool]]:
            rows = [self._fit(ctx, cont) for _, ctx, cont in requests]
            order = sorted(range(len(rows)), key=lambda i: -sum(map(len, rows[i])))  # like lengths together
            out: list[tuple[float, bool]] = [(0.0, False)] * len(rows)
            size = override_bs or int(self.batch_size)
            for start in range(0, len(order), size):
                idx = order[start: start + size]
                for i, answer in zip(idx, continuation_scores(self.method, [rows[i] for i in idx], self.tokenizer)):
                    out[i] = answer
                    if requests[i][0] is not None:  # the harness's response cache (rolling windows have none)
                        self.cache_hook.add_partial("loglikelihood", requests[i][0], answer)
            return out

        def _fit(self, ctx: list[int], cont: list[int]) -> tuple[list[int], list[int]]:
            """(context, continuation) cut from the left to the harness's window: max_length inputs."""
            kept = (ctx + cont)[-(self.max_length + 1):]
            return kept[: len(kept) - len(cont)], cont

        def _model_generate(self, context: torch.Tensor, max_length: int, stop: list[str],
                            **generation_kwargs: Any) -> torch.Tensor:
            mask = generation_kwargs.get("attention_mask", torch.ones_like(context)).bool()
            texts = [self.tokenizer.decode(row[keep], skip_special_tokens=True) for row, keep in zip(context, mask)]
            with self.method.applied(method_queries(self.method, texts)):
                return super()._model_generate(context, max_length, stop, **generation_kwargs)

    return MethodLM


def method_queries(method: Method, contexts: list[str]) -> list[str]:
    """What the method reads as each query: the input of a context written in its own prompt, as ICL Lab's own
    runners give it, else the whole context."""
    return [method.template.input_of(text) or text for text in contexts]


@torch.no_grad()
def continuation_scores(method: Method, rows: Sequence[tuple[list[int], list[int]]],
                        tokenizer: PreTrainedTokenizerBase) -> list[tuple[float, bool]]:
    """(log p(continuation | context), whether each continuation token is the greedy one) per (context ids,
    continuation ids) row, in one batch: the contexts' prefill under `method.intervention`, the continuations
    from that cache under `method.decode_intervention`. `tokenizer` decodes the contexts for the method."""
    lm = method.lm
    contexts = [ctx for ctx, _ in rows]
    queries = method_queries(method, tokenizer.batch_decode(contexts, skip_special_tokens=True))
    enc = pad_left(lm, contexts)
    cache = DynamicCache(config=lm.model.config)
    with lm.lock:
        first = torch.log_softmax(prefill(lm, enc, cache, method.intervention(queries)), -1)
        conts = [cont for _, cont in rows]
        head = torch.tensor([cont[0] for cont in conts], device=first.device)
        lp = first.gather(1, head[:, None])[:, 0]
        greedy = first.argmax(-1) == head
        if max(map(len, conts)) > 1:
            with method.decode_intervention(queries) as during:
                rest_lp, rest_greedy = _rest_of(lm, enc, cache, conts, during)
            lp, greedy = lp + rest_lp, greedy & rest_greedy
    return [(float(a), bool(b)) for a, b in zip(lp.tolist(), greedy.tolist())]


def _rest_of(lm: LoadedModel, enc: Encoded, cache: DynamicCache, conts: list[list[int]],
             during: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
    """Summed log-probs (B,) of each continuation's tokens after its first, and whether all were greedy (B,): its
    tokens but the last run after the cached context (right-padded, masked), each predicting the next."""
    dev, width = enc.input_ids.device, max(map(len, conts)) - 1
    inputs = torch.full((len(conts), width), lm.tokenizer.pad_token_id, dtype=torch.long, device=dev)
    targets = torch.zeros_like(inputs)
    real = torch.zeros_like(inputs, dtype=torch.bool)
    for row, cont in enumerate(conts):
        n = len(cont) - 1
        inputs[row, :n] = torch.tensor(cont[:-1])
        targets[row, :n] = torch.tensor(cont[1:])
        real[row, :n] = True
    mask = torch.cat([enc.attention_mask, real.long()], 1)
    pos = enc.lengths[:, None] + torch.arange(width, device=dev)[None]
    hidden = lm.adapter.body(input_ids=inputs, attention_mask=mask, position_ids=pos, cache=cache, use_cache=True,
                             **during).last_hidden_state
    lp, hit = token_logprobs(lm, hidden, torch.arange(width, device=dev), targets)
    return (lp * real).sum(-1), (hit | ~real).all(-1)


def evaluate_tasks(harness_model: Any, tasks: Sequence[str], *, num_fewshot: int | None = None,
                   limit: int | None = None, include_path: str | None = None) -> dict[str, Any]:
    """`lm_eval.simple_evaluate` of `harness_model` (`harness_lm` or `plain_lm`) on the harness tasks `tasks` (their
    names; `include_path`: a folder of the user's own task YAML files besides lm-eval's), `num_fewshot`
    demonstrations (default: each task's), the first `limit` documents of each; the per-document answers kept
    (`samples`). HarnessError without lm-eval."""
    return lm_eval_module().simple_evaluate(model=harness_model, tasks=list(tasks), num_fewshot=num_fewshot,
                                            limit=limit, task_manager=_task_manager(include_path), log_samples=True)


@functools.cache
def _task_manager(include_path: str | None) -> Any:
    """lm-eval's index of its task files (and those under `include_path`): made once, it reads thousands of YAMLs."""
    return lm_eval_module("lm_eval.tasks").TaskManager(include_path=include_path)
