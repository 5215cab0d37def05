"""How a checkpoint is loaded: its dtype, its device map, and whether it fits before a byte of it is read.

The options are `load_model`'s arguments (the CLI's `--dtype`, `--device-map`, `--max-memory`,
`--offload-folder`); one not given takes `ICL_LAB_DTYPE`, `ICL_LAB_DEVICE_MAP`, `ICL_LAB_MAX_MEMORY` or
`ICL_LAB_OFFLOAD_FOLDER`, which is how the CLI hands its flags to the app, that loads models by name.
A device map goes to accelerate's big-model inference through `from_pretrained`.

Before loading, the model is built from its config on the meta device (no memory) and its size in the chosen
dtype is compared with the memory the device map may use; a model that cannot fit is refused with both sizes
and the flags that would make it fit, rather than failing half-way through reading its weights.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from accelerate import init_empty_weights
from accelerate.utils import compute_module_sizes, convert_file_size_to_int, get_max_memory
from transformers import AutoConfig, AutoModelForCausalLM

from icr_app.core.errors import UserError

DTYPES = ("auto", "float32", "bfloat16", "float16")
STRATEGIES = ("auto", "balanced", "balanced_low_0", "sequential")  # accelerate spreads the model itself
ENV = {"dtype": "ICL_LAB_DTYPE", "device_map": "ICL_LAB_DEVICE_MAP", "max_memory": "ICL_LAB_MAX_MEMORY",
       "offload_folder": "ICL_LAB_OFFLOAD_FOLDER"}  # each option's variable


class ModelTooLargeError(UserError):
    """The model does not fit in the memory the loading options allow; the message says what would."""


@dataclass(frozen=True)
class LoadOptions:
    """What `load_model` loads a checkpoint as; None fields take their default (see `device_map_arg`)."""

    dtype: str = "auto"  # auto: fp32 on the CPU, bf16 on a GPU that has it, else fp16
    device_map: str | None = None  # auto|balanced|sequential|cpu|cuda|JSON file; None: the one local device
    max_memory: str | None = None  # "0=20GiB,1=20GiB,cpu=60GiB"
    offload_folder: str | None = None

    @classmethod
    def from_env(cls) -> LoadOptions:
        return cls().given(**{field: os.environ.get(var) for field, var in ENV.items()})

    def given(self, **fields: str | None) -> LoadOptions:
        """These options with the `fields` that are not None in their place."""
        return replace(self, **{name: value for name, value in fields.items() if value is not None})

    def env(self) -> dict[str, str]:
        """The ICL_LAB_* variables that give these options (for the app, which loads models by name)."""
        return {var: getattr(self, field) for field, var in ENV.items() if getattr(self, field) is not None}

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

    def pretrained_kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"dtype": self.torch_dtype(), "device_map": self.device_map_arg()}
        if self.max_memory:
            kw["max_memory"] = self.memory()
        if self.offload_folder:
            kw["offload_folder"] = self.offload_folder
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


def model_bytes(path: str | Path, dtype: torch.dtype, **kwargs: Any) -> dict[str, int]:
    """{module name: bytes} of the checkpoint's model in `dtype`, built from its config on the meta device
    ("" is the whole model)."""
    config = AutoConfig.from_pretrained(path, **kwargs)
    with init_empty_weights():
        model = AutoModelForCausalLM.from_config(config)
    return dict(compute_module_sizes(model, dtype=dtype))


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
    sizes = model_bytes(path, dtype, **kwargs)
    have = {k: v for k, v in get_max_memory(options.memory()).items() if k != "disk"}
    for device, need in _needs(sizes, options.device_map_arg()).items():
        if device == "disk" and not options.offload_folder:
            raise ModelTooLargeError("model.needs_offload", name=name)
        if device == "disk" or (device == "all" and options.offload_folder):
            continue
        limit = sum(have.values()) if device == "all" else have.get(_device_key(device), 0)
        if need > limit:
            raise _refusal(name, dtype, sizes[""], need, device, limit)


def _refusal(name: str, dtype: torch.dtype, total: int, need: int, device: Any, limit: int) -> ModelTooLargeError:
    tips = ["--dtype bfloat16 (half the bytes of float32)"] if dtype.itemsize > 2 else []
    tips += ["--device-map auto with a larger --max-memory (e.g. 0=...,1=...,cpu=...) to spread it over GPUs and "
             "the CPU", "--device-map auto --offload-folder DIR to offload what does not fit to disk"]
    sizes = {"name": name, "need": _gib(need), "dtype": dtype_name(dtype), "total": _gib(total), "limit": _gib(limit),
             "flags": "; ".join(tips)}
    if device == "all":
        return ModelTooLargeError("model.too_large_all", **sizes)
    return ModelTooLargeError("model.too_large", device=device, **sizes)
