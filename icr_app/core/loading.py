"""How a checkpoint is loaded: its dtype, its device map, its quantisation, where it comes from, and whether it
fits before a byte of it is read.

`LoadOptions` is the one object that says how: `load_model` takes it (or its fields as keywords), the CLI makes
it from its flags (`--dtype`, `--device-map`, `--max-memory`, `--offload-folder`, `--quantization`, `--revision`,
`--trust-remote-code`, `--local-files-only`, `--attn-implementation`) and hands it to the page. The `ICL_LAB_*`
variables are read only at those edges (`LoadOptions.from_env`), never by `load_model` itself. A device map goes
to accelerate's big-model inference through `from_pretrained`; `quantization` to bitsandbytes.

Before loading, the model is built from its config on the meta device (no memory) and its size in the chosen
dtype (its linear layers at 4 or 8 bits when quantised) is compared with the memory the device map may use; a
model that cannot fit is refused with both sizes and the flags that would make it fit, rather than failing
half-way through reading its weights.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import torch
from accelerate import init_empty_weights
from accelerate.utils import CustomDtype, compute_module_sizes, convert_file_size_to_int, get_max_memory
from torch import nn
from transformers import AutoConfig, AutoModelForCausalLM
from transformers.quantizers.base import get_keys_to_not_convert

from icr_app.core.errors import UserError

DTYPES = ("auto", "float32", "bfloat16", "float16")
STRATEGIES = ("auto", "balanced", "balanced_low_0", "sequential")  # accelerate spreads the model itself
QUANTIZATIONS = ("4bit", "8bit")  # bitsandbytes' linear layers
KERNELS = ("sdpa", "eager")  # what ICL Lab's attention function calls when no method reads the attention
QUANTIZED_DTYPE = {"4bit": CustomDtype.INT4, "8bit": torch.int8}  # a quantised linear weight's bytes per entry
BNB_INSTALL = 'pip install "bitsandbytes>=0.48,<1"'
class LoadingError(UserError):
    """Loading options that cannot be met: an unknown quantisation or kernel, bitsandbytes missing."""


class ModelTooLargeError(UserError):
    """The model does not fit in the memory the loading options allow; the message says what would."""


@dataclass(frozen=True)
class LoadOptions:
    """How `load_model` loads a checkpoint; None fields take their default (see `device_map_arg`)."""

    dtype: str = "auto"  # auto: fp32 on the CPU, bf16 on a GPU that has it, else fp16
    device_map: str | None = None  # auto|balanced|sequential|cpu|cuda|JSON file; None: the one local device
    max_memory: str | None = None  # "0=20GiB,1=20GiB,cpu=60GiB"
    offload_folder: str | None = None
    quantization: str | None = None  # 4bit|8bit: bitsandbytes' linear layers; None: the weights as `dtype`
    revision: str | None = None  # a hub checkpoint's branch, tag or commit
    trust_remote_code: bool = False  # run the checkpoint's own modelling code (only when asked)
    local_files_only: bool = False  # never reach the hub: the local cache or folder only
    attn_implementation: str | None = None  # the kernel of ICL Lab's attention function (KERNELS); None: sdpa

    def __post_init__(self) -> None:
        """Options that cannot be met are refused when made, before anything loads."""
        if self.quantization is not None and self.quantization not in QUANTIZATIONS:
            raise LoadingError("model.quantization", quantization=self.quantization, known=", ".join(QUANTIZATIONS))
        if self.attn_implementation is not None and self.attn_implementation not in KERNELS:
            raise LoadingError("model.kernel", kernel=self.attn_implementation, kernels=", ".join(KERNELS))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> LoadOptions:
        """The options the `ICL_LAB_<FIELD>` variables give (ICL_LAB_DTYPE, ICL_LAB_TRUST_REMOTE_CODE=1, ...):
        for the edges only, the CLI and a Space's app.py, never `load_model`."""
        given: dict[str, Any] = {}
        for f in fields(cls):
            text = environ.get(f"ICL_LAB_{f.name.upper()}")
            if text is not None:
                given[f.name] = text.strip().lower() in ("1", "true", "yes", "on") if f.type == "bool" else text
        return cls().given(**given)

    def given(self, **values: Any) -> LoadOptions:
        """These options with the `values` that are not None in their place."""
        return replace(self, **{name: value for name, value in values.items() if value is not None})

    def hub_kwargs(self) -> dict[str, Any]:
        """What every `from_pretrained` of the checkpoint (config, tokenizer, model) takes."""
        kw: dict[str, Any] = {"trust_remote_code": self.trust_remote_code, "local_files_only": self.local_files_only}
        return kw | ({"revision": self.revision} if self.revision else {})

    @property
    def kernel(self) -> str:
        return self.attn_implementation or "sdpa"

    def torch_dtype(self) -> torch.dtype:
        if self.dtype not in DTYPES:
            raise ValueError(f"unknown dtype {self.dtype!r}; expected one of {', '.join(DTYPES)}")
        if self.dtype != "auto":
            return getattr(torch, self.dtype)
        if not torch.cuda.is_available():
            return torch.float32
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16

    def memory(self) -> dict[int | str, int] | None:
        """`--max-memory` as accelerate's {device: bytes}: GPU indices as ints, "cpu" and "disk" as names."""
        if not self.max_memory:
            return None
        out: dict[int | str, int] = {}
        for part in self.max_memory.split(","):
            device, _, size = part.partition("=")
            device = device.strip()
            if not size:
                raise ValueError(f"--max-memory wants DEVICE=SIZE pairs (e.g. 0=20GiB,cpu=60GiB), not {part!r}")
            out[int(device) if device.isdigit() else device] = convert_file_size_to_int(size.strip())
        return out

    def device_map_arg(self) -> str | dict[str, Any]:
        """The `device_map` for `from_pretrained`: a strategy name, or {module: device} (one device or a file)."""
        chosen = self.device_map or ("auto" if self.max_memory else _local_device())
        if chosen in STRATEGIES:
            return chosen
        if chosen.endswith(".json"):
            path = Path(chosen)
            if not path.is_file():
                raise FileNotFoundError(f"--device-map {chosen}: no such file")
            return json.loads(path.read_text())
        return {"": chosen}

    def quantization_config(self) -> Any:
        """bitsandbytes' config for `quantization` (None when unquantised); LoadingError when it cannot be had."""
        if self.quantization is None:
            return None
        if importlib.util.find_spec("bitsandbytes") is None:
            raise LoadingError("model.no_bitsandbytes", quantization=self.quantization, install=BNB_INSTALL)
        from transformers import BitsAndBytesConfig

        if self.quantization == "8bit":
            return BitsAndBytesConfig(load_in_8bit=True)
        return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=self.torch_dtype())

    def pretrained_kwargs(self) -> dict[str, Any]:
        """`from_pretrained`'s keywords for the model (its tokenizer and config take `hub_kwargs`)."""
        kw: dict[str, Any] = {"dtype": self.torch_dtype(), "device_map": self.device_map_arg(), **self.hub_kwargs()}
        if self.max_memory:
            kw["max_memory"] = self.memory()
        if self.offload_folder:
            kw["offload_folder"] = self.offload_folder
        if self.quantization:
            kw["quantization_config"] = self.quantization_config()
        return kw


def _local_device() -> str:
    """The CPU, or the GPU of this process (`accelerate launch` and torchrun give each process its LOCAL_RANK)."""
    return f"cuda:{os.environ.get('LOCAL_RANK', '0')}" if torch.cuda.is_available() else "cpu"


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _gib(n: float) -> str:
    for unit, power in (("GiB", 30), ("MiB", 20)):
        if n >= 2 ** (power - 2):
            return f"{n / 2**power:.2f} {unit}"
    return f"{n / 2**10:.1f} KiB"


def model_bytes(path: str | Path, dtype: torch.dtype, quantization: str | None = None,
                **kwargs: Any) -> dict[str, int]:
    """{module name: bytes} of the checkpoint's model in `dtype`, built from its config on the meta device
    ("" is the whole model); with `quantization`, the linear layers bitsandbytes converts at 4 or 8 bits an entry
    (their per-block scales, a few percent more, are not counted)."""
    config = AutoConfig.from_pretrained(path, **kwargs)
    with init_empty_weights():
        model = AutoModelForCausalLM.from_config(config, trust_remote_code=kwargs.get("trust_remote_code", False))
    special = None
    if quantization is not None:
        special = {f"{name}.weight": QUANTIZED_DTYPE[quantization] for name in quantized_linears(model)}
    sizes = {name: int(size) for name, size in compute_module_sizes(model, dtype=dtype, special_dtypes=special).items()}
    # A tied weight (the output head that is the input embedding) is one tensor: each module holding it needs it,
    # but the modules above both hold it once.
    for tied, source in getattr(model, "all_tied_weights_keys", {}).items():
        for module in _common_ancestors(tied, source):
            sizes[module] -= sizes[tied]
    return sizes


def _common_ancestors(a: str, b: str) -> list[str]:
    """The modules above both parameter names ("" is the model)."""
    shared = []
    for x, y in zip(a.split(".")[:-1], b.split(".")[:-1]):
        if x != y:
            break
        shared.append(x)
    return [".".join(shared[:i]) for i in range(len(shared) + 1)]


def quantized_linears(model: nn.Module) -> list[str]:
    """The linear layers bitsandbytes quantises: all but those transformers keeps whole (the output head and
    the weights tied to it)."""
    kept = get_keys_to_not_convert(model)
    return [name for name, module in model.named_modules() if isinstance(module, nn.Linear)
            and not any(name == k or name.startswith(f"{k}.") for k in kept)]


def _needs(sizes: dict[str, int], device_map: str | dict[str, Any]) -> dict[Any, int]:
    """Bytes each device must hold: the whole model on the one device, or per device in an explicit map;
    a strategy draws on every device it may use (the key "all")."""
    if isinstance(device_map, str):
        return {"all": sizes[""]}
    need: dict[Any, int] = {}
    for module, device in device_map.items():
        if module not in sizes:
            raise ValueError(f"the device map names '{module}', which is not a module of this model")
        need[device] = need.get(device, 0) + sizes[module]
    return need


def _device_key(device: Any) -> int | str:
    """A device as `get_max_memory` names it: GPU index as int ("cuda" and "cuda:1" too), else its name."""
    text = str(device)
    if text == "cuda":
        return 0
    text = text.removeprefix("cuda:")
    return int(text) if text.isdigit() else text


def check_fits(name: str, path: str | Path, options: LoadOptions, **kwargs: Any) -> None:
    """ModelTooLargeError unless the checkpoint fits where `options` put it (disk offload always fits)."""
    dtype = options.torch_dtype()
    sizes = model_bytes(path, dtype, options.quantization, **options.hub_kwargs(), **kwargs)
    have = {k: v for k, v in get_max_memory(options.memory()).items() if k != "disk"}
    for device, need in _needs(sizes, options.device_map_arg()).items():
        if device == "disk" and not options.offload_folder:
            raise ModelTooLargeError("model.needs_offload", name=name)
        if device == "disk" or (device == "all" and options.offload_folder):
            continue
        limit = sum(have.values()) if device == "all" else have.get(_device_key(device), 0)
        if need > limit:
            raise _refusal(name, options, sizes[""], need, device, limit)


def _refusal(name: str, options: LoadOptions, total: int, need: int, device: Any,
             limit: int) -> ModelTooLargeError:
    dtype = options.torch_dtype()
    tips = ["--dtype bfloat16 (half the bytes of float32)"] if dtype.itemsize > 2 else []
    if options.quantization != "4bit":
        tips += ["--quantization 4bit or 8bit (bitsandbytes: its linear layers at 4 or 8 bits an entry)"]
    tips += ["--device-map auto with a larger --max-memory (e.g. 0=...,1=...,cpu=...) to spread it over GPUs and "
             "the CPU", "--device-map auto --offload-folder DIR to offload what does not fit to disk"]
    shown = dtype_name(dtype) + (f" with {options.quantization} linear layers" if options.quantization else "")
    sizes = {"name": name, "need": _gib(need), "dtype": shown, "total": _gib(total), "limit": _gib(limit),
             "flags": "; ".join(tips)}
    if device == "all":
        return ModelTooLargeError("model.too_large_all", **sizes)
    return ModelTooLargeError("model.too_large", device=device, **sizes)
