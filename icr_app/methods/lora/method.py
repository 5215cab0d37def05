"""LoRA (Hu et al., 2021) with peft: explicit fine-tuning, the weight-update reference that SITE's paper compares
against. Not in-context learning: low-rank updates ΔW = (α/r)·B·A are trained into a private copy of the model.

The shared model is never changed. `private_copy` copies the model's module tree and shares every parameter's and
buffer's storage with it (read only: no code writes them), each parameter behind the copy's own frozen
`Parameter`, so peft's marking of what trains stays in the copy; peft's layers go into that copy only, and
before merging, each targeted weight is replaced by a private clone, so `merge_and_unload` writes into the copy.
The merged copy is wrapped as its own `LoadedModel` (same name, so the same fingerprint, its own lock) and
`LoraMethod` answers through it with the shared `Method.predict`. On SmolLM2-135M (RSS with every weight
resident) `copy.deepcopy(lm.model)` costs +493 MB; a built LoRA costs only its merged weights, +37 MB for the
q/v projections (+424 MB for all-linear): that is what lets every visitor of the app keep one. Answering costs
what zero-shot costs (the same matrices: latency ratio 0.99-1.09 on sentiment). Training runs on the private
copy without the shared model's lock, so other visitors' answers never wait for it.

Decisions (SmolLM2-135M, `eval --n-test 100 --seed 0`, one thread each because the 2 cores were shared with 3-7
other jobs; BENCHMARKS.md has the tables):
- targets: the family's attention projections, `lm.adapter.family.lora_targets` (q/v; GPT-2's c_attn with
  fan_in_fan_out, GPT-NeoX's query_key_value, Phi-3's qkv_proj). Measured against `all-linear` (attention and
  MLP, 5.3× the parameters): sentiment 1.000 vs 0.921 (n 38), antonym 0.41 vs 0.46; no consistent gain for
  +387 MB per built adapter and a 15-25 % slower build, so all-linear is a flag (`--lora-targets all-linear`).
- rank 8, alpha 16, LoRA dropout 0.05 (the base model stays in eval mode, its own dropout off), AdamW with a
  constant lr 5e-4 and no weight decay (early stopping picks the step, so there is no schedule to tune); other
  learning rates were not measured.
- budget: 40 steps of 4 examples on at most 80 examples (64 fit, 16 validate, every 10 steps). A step on the
  full model costs 1.5 CPU-s for 4 sentiment-length examples (forward and backward through all 30 layers, for
  the q/v of every layer), so sentiment builds in 54 s on one contended thread (the whole eval run: 72 CPU-s).
- the loss is the cross-entropy of the answer tokens `" y"` only, tokenised as the scorer does; early stopping
  on the held-out loss of a validation part of the train split keeps the best adapter (the untrained one, B = 0,
  which is zero-shot exactly, when training never helps).
"""
from __future__ import annotations

import copy
import functools
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import torch
from accelerate.hooks import remove_hook_from_module
from accelerate.utils import align_module_device, has_offloaded_params
from peft import LoraConfig as PeftConfig
from peft import PeftModel, get_peft_model, get_peft_model_state_dict, set_peft_model_state_dict
from peft.tuners.lora import LoraLayer
from peft.tuners.tuners_utils import check_target_module_exists
from torch import nn
from transformers import PreTrainedModel

from icr_app.core.artefacts import ArtefactError
from icr_app.core.models import LoadedModel, owned, wrap
from icr_app.core.progress import Progress, no_progress
from icr_app.core.scoring import Intervention
from icr_app.core.seeds import seeded
from icr_app.core.tasks import Example, Task, split
from icr_app.core.trace import Trace
from icr_app.methods.base import BuildContext, Method, Prediction
from icr_app.methods.lora.artefact import LoraMeta, LoraState, config_from_json, config_json
from icr_app.methods.lora.config import LoraConfig
from icr_app.methods.lora.train import AnswerSet, set_dropout, train_adapter
from icr_app.methods.state import StatefulMethod, built_fields


def private_copy(lm: LoadedModel) -> PreTrainedModel:
    """The model's module tree copied, every parameter's and buffer's storage shared with `lm.model` (nothing
    copied). Each parameter of the copy is its own frozen `Parameter` object: peft marks which of them train, and
    that must not change the `requires_grad` of the user's model."""
    with lm.lock:  # hooks live only under the lock, so the copy never carries another caller's hooks
        shared: dict[int, Any] = {id(b): b for b in lm.model.buffers()}
        shared.update({id(p): nn.Parameter(p.detach(), requires_grad=False) for p in lm.model.parameters()})
        return copy.deepcopy(lm.model, shared)


def peft_config(lm: LoadedModel, settings: LoraConfig) -> PeftConfig:
    targets = list(lm.adapter.family.lora_targets) if settings.targets == "attention" else "all-linear"
    return PeftConfig(r=settings.rank, lora_alpha=settings.alpha, lora_dropout=settings.dropout,
                      target_modules=targets, fan_in_fan_out=lm.adapter.family.conv1d, bias="none")


def resident_targets(model: nn.Module, config: PeftConfig) -> None:
    """Give each targeted layer of the private copy whose weights accelerate offloads (they sit on the meta
    device between calls) its own weights on its execution device, and drop its hook: peft puts the adapters
    beside the base weight, and merging writes into it, neither of which can happen on the meta device."""
    for name, module in model.named_modules():
        targeted = (isinstance(module, nn.Linear) if config.target_modules == "all-linear"
                    else check_target_module_exists(config, name))
        if not (targeted and has_offloaded_params(module)):
            continue
        with align_module_device(module):
            weights = {n: p.detach().clone() for n, p in module.named_parameters(recurse=False)}
        remove_hook_from_module(module)
        for n, w in weights.items():
            setattr(module, n, nn.Parameter(w, requires_grad=False))


def with_adapter(lm: LoadedModel, config: PeftConfig, seed: int = 0) -> tuple[LoadedModel, PeftModel]:
    """A private `LoadedModel` whose model carries fresh LoRA layers (B = 0, A seeded, dropout off), and their
    peft wrapper."""
    lm.refuse_quantized("LoRA", "it trains on a private copy of the model's full-precision weights and merges its "
                        "update into them")
    private = wrap(owned(private_copy(lm)), lm.tokenizer, lm.name)
    resident_targets(private.model, config)
    with seeded(seed, private.model):  # peft draws A from the global generator
        peft_model = get_peft_model(private.model, config)
    set_dropout(peft_model, False)
    return private, peft_model


def merged_model(lm: LoadedModel, adapter: LoraState) -> LoadedModel:
    """A private `LoadedModel`: `lm`'s model with the adapter merged into private clones of the weights it
    targets (every other parameter shared with `lm`, which is left exactly as it was)."""
    adapter.check_model(lm)
    private, peft_model = with_adapter(lm, config_from_json(adapter.peft))
    expected = {k: tuple(v.shape) for k, v in get_peft_model_state_dict(peft_model).items()}
    found = {k: tuple(v.shape) for k, v in adapter.tensors.items()}
    if found != expected:
        raise ArtefactError("lora.tensors_mismatch", n=len(found), expected=len(expected))
    set_peft_model_state_dict(peft_model, adapter.tensors)
    for module in peft_model.modules():
        if isinstance(module, LoraLayer):  # merging writes into the base weight: make it this copy's own
            base = module.get_base_layer()
            base.weight = nn.Parameter(base.get_parameter("weight").detach().clone(), requires_grad=False)
    peft_model.merge_and_unload()
    return private


@contextmanager
def adapter_update(lm: LoadedModel, adapter: LoraState) -> Iterator[dict[str, Any]]:
    """The adapter's update on `lm`'s own model, unmerged, for the block: each targeted layer's output gets
    (α/r)·B·A·x added (peft's LoRA layer in eval mode, on any device and dtype), its weights untouched."""
    config = config_from_json(adapter.peft)
    scale = config.lora_alpha / config.r
    factors = {}  # layer name -> (A, B); peft names A and B after the layer, under its own wrapper's prefix
    for key, a in adapter.tensors.items():
        if key.endswith(".lora_A.weight"):
            name = key.removeprefix("base_model.model.").removesuffix(".lora_A.weight")
            factors[name] = (a, adapter.tensors[key.replace("lora_A", "lora_B")])

    def add_update(name: str, out: torch.Tensor) -> torch.Tensor:
        x = trace[name].hidden_in.to(out)  # where and how the layer computed (accelerate may move its input)
        a, b = (f.to(out) for f in factors[name])
        return out + scale * (x @ a.T) @ b.T

    with Trace({name: lm.model.get_submodule(name) for name in factors}, retain_input=True,
               edit_output=add_update) as trace:
        yield {}


def holdout(train: Task, settings: LoraConfig, seed: int) -> tuple[list[Example], list[Example]]:
    """(fit, validation) from a seeded sample of at most `max_examples` training examples; both non-empty."""
    if len(train.examples) < 2:
        raise ValueError("LoRA needs at least 2 training examples (one to fit, one to validate)")
    _, pool = split(train, settings.max_examples, seed, min_train=0)
    fit, val = split(pool, max(1, round(settings.val_fraction * len(pool.examples))), seed, min_train=1)
    return list(fit.examples), list(val.examples)


def build(ctx: BuildContext, s: LoraConfig) -> LoraMethod:
    """Train an adapter on a task's examples in a private copy of the model; `progress` wraps the steps."""
    lm, train, answering, seed, progress = ctx.lm, ctx.train, ctx.answering, ctx.seed, ctx.progress
    t0 = time.perf_counter()
    fit, val = holdout(train, s, seed)
    config = peft_config(lm, s)
    private, peft_model = with_adapter(lm, config, seed)
    zero_shot = Method(private, answering)
    with seeded(seed, peft_model):  # the dropout masks
        curve = train_adapter(peft_model, AnswerSet(private, zero_shot, fit), AnswerSet(private, zero_shot, val), s,
                              seed, progress)
    # rounded to fp16 and kept so: the file stores them in fp16 exactly (half the bytes; a prebuilt adapter is
    # one per built-in task and model), and the adapter answering here is the one a saved file answers with
    tensors = {k: v.detach().cpu().half().float() for k, v in get_peft_model_state_dict(peft_model).items()}
    meta = LoraMeta(task=train.name, **built_fields(lm, answering), curve=curve, n_fit=len(fit), n_val=len(val),
                    build_s=time.perf_counter() - t0, seed=seed)
    # peft records where the weights came from (a local cache path here): name the model instead
    made = peft_model.peft_config["default"]
    assert isinstance(made, PeftConfig)  # peft's LoraConfig: the one the model was made with, as peft keeps it
    peft = config_json(made) | {"base_model_name_or_path": lm.name}
    return LoraMethod(lm, LoraState(tensors=tensors, peft=peft, meta=meta, fingerprint=lm.fingerprint))


class LoraMethod(StatefulMethod):
    """Zero-shot prompts answered by a private copy of the model with the trained update merged in.

    `lm` stays the shared model the adapter (`state`) belongs to (what the app and the artefacts check); `tuned`
    is a plain zero-shot `Method` over the private merged model, and answering is its `predict`; `applied` adds the
    same update to the shared model's own calls, unmerged (`adapter_update`).
    """

    name = "lora"
    STATE = LoraState
    state: LoraState

    @functools.cached_property
    def tuned(self) -> Method:
        """Made at the first answer, not when the adapter is loaded: the page loads a task's prebuilt adapter
        when the task is picked, and its answer to the one-click query is shipped, so most picks never merge."""
        return Method(merged_model(self.lm, self.state), self.answering)

    def predict(self, queries: list[str], batch_size: int = 16, progress: Progress = no_progress,
                ) -> list[Prediction]:
        return self.tuned.predict(queries, batch_size, progress)

    def intervention(self, queries: list[str]) -> Intervention:
        """The update on the shared model itself, for `applied` (`predict` answers through the merged copy)."""
        return adapter_update(self.lm, self.state)

    decode_intervention = intervention  # the update is in every weight it targets, at every step


def neutral(method: LoraMethod) -> LoraMethod:
    """The same adapter with B = 0, as before training: the update B·A is zero."""
    state = method.state
    tensors = {k: torch.zeros_like(v) if ".lora_B." in k else v for k, v in state.tensors.items()}
    return LoraMethod(method.lm, replace(state, tensors=tensors))
