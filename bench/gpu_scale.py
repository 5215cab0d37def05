"""What every method costs at 8B scale: random-weight models of Llama-3.1-8B's and Qwen2.5-7B's shapes, in bf16.

    PYTHONPATH=. python bench/gpu_scale.py [--config llama-8b,qwen-7b] [--n-test 100] [--json OUT]
    PYTHONPATH=. python bench/gpu_scale.py --config tiny     # the same script on the CPU in seconds (the tests)
    PYTHONPATH=. python bench/gpu_scale.py --tokenizer DIR --random-encoder DIR   # a machine without the packages

Each model is built from its published configuration directly on the GPU (nothing downloaded or carried), with
the default model's tokenizer and the vocabulary size set to match it; with several GPUs the 8B configuration
is also spread over all of them with a balanced `device_map` ("llama-8b-spread"). Half of the built-in
`sentiment` task builds every method (with its default config); the other half, cycled to `--n-test` queries,
times it: build seconds, latency per query as a ratio to zero-shot in the same run (after one discarded warm-up
run, zero-shot timed before and after the methods, the mean taken), and the peak GPU memory of its build and
answers against zero-shot's. Accuracy means nothing on random weights; time and memory do. ICR has no router
for a random model: its build is the PIDs stage on the task, and it answers through an untrained router (the
same computation as a trained one); ELICIT's library and ATV's generator are built on the spot from the task and
`antonyms` (their build times include the library's and the generator's). `--config tiny` uses small method
configs, so the CPU run stays short.

A GPU machine may lack the default model's GGUF package and the sentence encoder's (together ~190 MB).
`--tokenizer` then reads the default model's tokenizer from a directory it was saved to, and `--random-encoder`
builds all-MiniLM-L6-v2's shape with random weights from its config and tokenizer files: the same computation
per query for ICR's router and ELICIT's retriever, like the random-weight language model.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from accelerate import dispatch_model, infer_auto_device_map, init_empty_weights
from accelerate.utils import get_balanced_memory, set_module_tensor_to_device
from transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForCausalLM,
    AutoTokenizer,
    LlamaConfig,
    PretrainedConfig,
    Qwen2Config,
)

from icr_app.core import encoder as encoder_module
from icr_app.core.encoder import MINILM, Encoder
from icr_app.core.models import DEFAULT_MODEL, LoadedModel, load_model, wrap
from icr_app.core.tasks import builtin_task, split
from icr_app.methods import REGISTRY, build_method
from icr_app.methods.atv.generator import FILE as GENERATOR_FILE
from icr_app.methods.atv.generator import GeneratorConfig, build_generator
from icr_app.methods.atv.method import AtvConfig
from icr_app.methods.base import Answering, Method
from icr_app.methods.elicit.library import FILE as LIBRARY_FILE
from icr_app.methods.elicit.library import LibraryConfig, build_library
from icr_app.methods.elicit.method import ElicitConfig
from icr_app.methods.i2cl.method import I2CLConfig
from icr_app.methods.icr.method import ICRMethod
from icr_app.methods.icr.pids import extract_pids
from icr_app.methods.icr.router import minilm_encoder, new_router
from icr_app.methods.icv.method import ICVConfig
from icr_app.methods.lora.config import LoraConfig
from icr_app.methods.site.method import SiteConfig
from icr_app.methods.task_vector import TaskVectorConfig

METHODS = tuple(REGISTRY)  # every registered method
TASK = "sentiment"

# The shapes of the published config.json files (meta-llama/Llama-3.1-8B, Qwen/Qwen2.5-7B); vocab set later.
SHAPES: dict[str, Callable[[], PretrainedConfig]] = {
    "llama-8b": lambda: LlamaConfig(
        hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
        num_key_value_heads=8, max_position_embeddings=131072, rms_norm_eps=1e-5, tie_word_embeddings=False,
        rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}),
    "qwen-7b": lambda: Qwen2Config(
        hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
        num_key_value_heads=4, max_position_embeddings=131072, rms_norm_eps=1e-6, tie_word_embeddings=False,
        use_sliding_window=False, rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}),
    "tiny": lambda: LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
                                num_key_value_heads=2, max_position_embeddings=512, tie_word_embeddings=False),
}
SMOKE = {  # --config tiny only: the CPU run of the tests
    "site": SiteConfig(n_prompts=4, n_demos=2, steps=4, batch_size=4, eval_every=2, patience=2, max_examples=20),
    "task-vector": TaskVectorConfig(n_prompts=4, val_size=6, batch_size=4),
    "function-vector": REGISTRY["function-vector"].config(n_prompts=3, n_corrupted=2, batch_size=2),
    "i2cl": I2CLConfig(demos_per_class=2, open_demos=4, calibration_examples=8, epochs=1, batch_size=4, open_epochs=1),
    "icv": ICVConfig(n_demos=4, val_examples=6, strengths=[0.0, 0.1]),
    "lora": LoraConfig(steps=4, batch_size=4, max_examples=16, eval_every=2, patience=2),
    "icr": {"n_prompts": 4},
    "elicit": LibraryConfig(n_prompts=2, n_demos=2, val_size=4, queries_per_domain=8, epochs=1),
    "atv": GeneratorConfig(hidden=16, steps=4, batch_size=4, per_domain=8, val_size=4, eval_every=2),
    "iterative-vector": REGISTRY["iterative-vector"].config(episodes=4, update_every=2),
    "state-vector": REGISTRY["state-vector"].config(n_prompts=2, n_demos=4, inner_window=3, momentum_steps=2,
                                                    val_size=6),
}


@dataclass
class Row:
    method: str
    build_s: float | None = None
    latency_s: float | None = None
    latency_ratio_to_zero_shot: float | None = None
    peak_gib: float | None = None  # peak GPU memory of the build and the answers (all GPUs together)
    peak_ratio_to_zero_shot: float | None = None
    error: str | None = None  # why the method could not run at this scale; the others still do


def gpus() -> list[int]:
    return list(range(torch.cuda.device_count()))


def device_map_for(model: torch.nn.Module, spread: bool) -> dict[str, Any]:
    """The whole model on the first GPU (the CPU without one), or balanced over every GPU."""
    if not spread:
        return {"": 0 if gpus() else "cpu"}
    memory = get_balanced_memory(model, dtype=torch.bfloat16, no_split_module_classes=model._no_split_modules)
    return infer_auto_device_map(model, max_memory=memory, no_split_module_classes=model._no_split_modules,
                                 dtype=torch.bfloat16)


def _device_of(name: str, device_map: dict[str, Any]) -> Any:
    """The device `device_map` gives the parameter `name` (its longest matching module prefix)."""
    prefixes = [m for m in device_map if m == "" or name == m or name.startswith(m + ".")]
    return device_map[max(prefixes, key=len)]


def random_model(config: PretrainedConfig, spread: bool = False) -> tuple[torch.nn.Module, dict[str, Any]]:
    """A bf16 model of `config` with random weights made where they will live (never whole on the CPU)."""
    with init_empty_weights():
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    device_map = device_map_for(model, spread)
    std = config.initializer_range
    for name, param in model.named_parameters():
        value = torch.empty(param.shape, dtype=torch.bfloat16, device=_device_of(name, device_map))
        if param.dim() == 1 and "norm" in name:  # norm weights at 1, like a trained model's scale
            value.fill_(1.0)
        else:
            value.normal_(0.0, std)
        set_module_tensor_to_device(model, name, value.device, value=value)
    return dispatch_model(model, device_map=device_map), device_map


def build(lm: LoadedModel, name: str, train, answering: Answering, smoke: bool) -> Method:
    domains = [train, builtin_task("antonyms")]
    if name in ("elicit", "atv"):  # a trained-once artefact no random model has: made here, its time counted
        with tempfile.TemporaryDirectory() as scratch:
            if name == "elicit":
                library = build_library(lm, domains, SMOKE["elicit"] if smoke else None)
                config: Any = ElicitConfig(library=str(library.save(Path(scratch) / LIBRARY_FILE, lm.fingerprint)))
            else:
                generator = build_generator(lm, domains, SMOKE["atv"] if smoke else None)
                config = AtvConfig(generator=str(generator.save(Path(scratch) / GENERATOR_FILE)))
            return build_method(lm, train, name, config, answering=answering)
    if name == "icr":
        n_prompts = SMOKE["icr"]["n_prompts"] if smoke else 32
        pids = extract_pids(lm, [train], n_prompts=n_prompts)
        encoder = minilm_encoder(lm.device)
        return ICRMethod.of(lm, new_router(lm, pids, encoder(["x"]).shape[-1], encoder=encoder).state(), answering)
    return build_method(lm, train, name, SMOKE.get(name) if smoke else None, answering=answering)


def reset_peak() -> None:
    for i in gpus():
        torch.cuda.reset_peak_memory_stats(i)


def peak_gib() -> float | None:
    return sum(torch.cuda.max_memory_allocated(i) for i in gpus()) / 2**30 if gpus() else None


def timed(method: Method, queries: list[str], batch_size: int) -> float:
    """Seconds per query, after one untimed batch."""
    method.predict(queries[:batch_size], batch_size=batch_size)
    if gpus():
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    method.predict(queries, batch_size=batch_size)
    if gpus():
        torch.cuda.synchronize()
    return (time.perf_counter() - t0) / len(queries)


def measure(lm: LoadedModel, name: str, train, queries: list[str], answering: Answering, batch_size: int,
            smoke: bool) -> Row:
    """Build `name` and answer `queries` with it: seconds and the peak GPU memory of both."""
    reset_peak()
    try:
        t0 = time.perf_counter()
        method = build(lm, name, train, answering, smoke)
        built = time.perf_counter() - t0
        return Row(name, built, timed(method, queries, batch_size), peak_gib=peak_gib())
    except (RuntimeError, ValueError) as err:  # e.g. out of memory: reported, and the next method runs
        return Row(name, error=f"{type(err).__name__}: {err}")


def default_tokenizer(directory: str | None):
    """The default model's tokenizer: from the directory it was saved to, else from its GGUF package."""
    if directory:
        return AutoTokenizer.from_pretrained(directory)
    return load_model(DEFAULT_MODEL, dtype="float32", device_map="cpu").tokenizer


def random_encoder(directory: str, device: str) -> Encoder:
    """all-MiniLM-L6-v2's computation (mean-pooled, normalised) with random weights, from its config and tokenizer,
    on `device` (where the real one runs: the model's)."""
    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModel.from_config(AutoConfig.from_pretrained(directory)).to(device).eval()

    def encode(texts: list[str]) -> torch.Tensor:
        with torch.inference_mode():
            batch = tokenizer(texts, padding=True, truncation=True, max_length=256, return_tensors="pt").to(device)
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1)

    return encode


def run_config(name: str, n_test: int, batch_size: int, methods: list[str], spread: bool = False,
               tokenizer_dir: str | None = None) -> dict[str, Any]:
    tokenizer = default_tokenizer(tokenizer_dir)
    config = replace_vocab(SHAPES[name](), len(tokenizer), tokenizer)
    t0 = time.perf_counter()
    model, device_map = random_model(config, spread)
    lm = wrap(model, tokenizer, f"random-{name}")
    load_s = time.perf_counter() - t0
    # Half the task builds the methods; its other half, cycled to `n_test` queries, is what they answer.
    task = builtin_task(TASK)
    train, test = split(task, len(task.examples) // 2, seed=0)
    queries = [test.inputs[i % len(test.inputs)] for i in range(n_test)]
    answering = Answering.of(lm, train)
    measure(lm, "zero-shot", train, queries, answering, batch_size, False)  # warm-up: the GPU's first kernels
    rows = {}
    for m in methods:
        rows[m] = measure(lm, m, train, queries, answering, batch_size, name == "tiny")
        print(f"{name}: {rows[m]}", flush=True)  # each row as it comes: a run cut short still reports
    # Zero-shot again after the others, so its latency is the mean of a run before and one after them.
    again = measure(lm, "zero-shot", train, queries, answering, batch_size, False)
    zero = rows["zero-shot"]
    zero.latency_s = (zero.latency_s + again.latency_s) / 2
    for row in rows.values():
        if row.error is None:
            row.latency_ratio_to_zero_shot = row.latency_s / zero.latency_s
            if row.peak_gib is not None:
                row.peak_ratio_to_zero_shot = row.peak_gib / zero.peak_gib
    params = sum(p.numel() for p in model.parameters())
    return {"config": name + ("-spread" if spread else ""), "parameters": params, "dtype": "bfloat16",
            "device_map": sorted({str(d) for d in device_map.values()}), "model_build_s": load_s, "task": TASK,
            "n_test": len(queries), "rows": [asdict(r) for r in rows.values()]}


def replace_vocab(config: PretrainedConfig, vocab: int, tokenizer) -> PretrainedConfig:
    """The configuration with the default tokenizer's vocabulary and special tokens."""
    config.vocab_size = vocab
    config.eos_token_id = config.pad_token_id = tokenizer.eos_token_id
    config.bos_token_id = tokenizer.bos_token_id
    return config


def table(result: dict[str, Any]) -> str:
    lines = [f"{result['config']}: {result['parameters'] / 1e9:.2f}B parameters, bf16 on {result['device_map']}, "
             f"built in {result['model_build_s']:.1f} s; {result['n_test']} queries of {result['task']}",
             f"{'method':<16} {'build s':>8} {'ms/query':>9} {'x zero-shot':>11} {'peak GiB':>9} {'x zero-shot':>11}"]
    for r in result["rows"]:
        if r["error"]:
            lines.append(f"{r['method']:<16} error: {r['error']}")
            continue
        peak = "-" if r["peak_gib"] is None else f"{r['peak_gib']:.2f}"
        ratio = "-" if r["peak_ratio_to_zero_shot"] is None else f"{r['peak_ratio_to_zero_shot']:.2f}x"
        lines.append(f"{r['method']:<16} {r['build_s']:>8.1f} {r['latency_s'] * 1000:>9.1f} "
                     f"{r['latency_ratio_to_zero_shot']:>10.2f}x {peak:>9} {ratio:>11}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default="llama-8b,qwen-7b", help=f"comma list of: {', '.join(SHAPES)}")
    p.add_argument("--methods", default=",".join(METHODS), help="comma list of methods (zero-shot always runs)")
    p.add_argument("--n-test", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--json", default=None, help="write every configuration's rows to this file")
    p.add_argument("--tokenizer", default=None, help="a directory the default model's tokenizer was saved to")
    p.add_argument("--random-encoder", default=None,
                   help="a directory with all-MiniLM-L6-v2's config and tokenizer: its shape with random weights")
    args = p.parse_args(argv)
    if args.random_encoder:  # primed in the per-process cache, so the router and the retriever both use it
        device = str(torch.device("cuda", 0) if gpus() else torch.device("cpu"))  # every model's input device
        encoder_module._ENCODERS[MINILM, device] = random_encoder(args.random_encoder, device)
    methods = ["zero-shot", *[m for m in args.methods.split(",") if m and m != "zero-shot"]]
    runs = [(name, False) for name in args.config.split(",") if name]
    if len(gpus()) > 1 and any(name == "llama-8b" for name, _ in runs):
        runs.append(("llama-8b", True))
    results = []
    for name, spread in runs:
        results.append(run_config(name, args.n_test, args.batch_size, methods, spread, args.tokenizer))
        print(table(results[-1]), flush=True)
        if args.json:  # after each configuration, so a run cut short keeps the ones it finished
            Path(args.json).write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
