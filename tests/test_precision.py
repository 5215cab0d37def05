"""Every method and analysis on a model loaded in bfloat16 (each family), and on one loaded with two of its blocks
offloaded to disk through accelerate's device map; artefacts built in fp32 answer there; a model too large
for `--max-memory` is refused before loading (issue 26).

The low-precision models go through `load_model` from a saved checkpoint, as a user's would: the dtype and the
device map are what `from_pretrained` made of the loading options.
"""

from __future__ import annotations

import importlib
import json
import os
import threading
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from families import FAMILIES, tiny_model
from helpers import (
    TINY_LORA,
    assert_zero_shot_exactly,
    generator_file,
    hash_encoder,
    library_file,
    router_folder,
    stand_in_encoders,
    tiny_configs,
)
from tiny import tiny_tokenizer

from icr_app.analyses.anchors import cached as anchors
from icr_app.analyses.anchors.compression import fixed_demo_prompts
from icr_app.analyses.anchors.isolation import isolation_experiment
from icr_app.analyses.anchors.reweighting import reweight_experiment
from icr_app.analyses.anchors.saliency import task_prompts
from icr_app.analyses.rank1.cached import rank1
from icr_app.cli import main
from icr_app.core.loading import LoadOptions, ModelTooLargeError
from icr_app.core.models import GGUFSource, load_model
from icr_app.core.prompts import Template
from icr_app.core.tasks import builtin_task, split
from icr_app.evaluation import evaluate
from icr_app.methods import REGISTRY, build_method
from icr_app.methods.base import Answering
from icr_app.methods.icr import router as router_module
from icr_app.methods.icr.method import ICRMethod
from icr_app.methods.icr.router import FILE, ICRRouter, RouterState

OFFLOADED = "llama-offloaded"  # the tiny Llama in bf16 with blocks 1 and 2 on disk
DISK_BLOCKS = (1, 2)


def save_checkpoint(family: str, folder) -> str:
    tok = tiny_tokenizer()
    tiny_model(family, tok).save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


def offload_map(folder) -> str:
    """A device map file sending two blocks to disk and the rest to the CPU."""
    n_layers = 4
    mapping = {"model.embed_tokens": "cpu", "model.norm": "cpu", "model.rotary_emb": "cpu", "lm_head": "cpu"}
    mapping |= {f"model.layers.{i}": "disk" if i in DISK_BLOCKS else "cpu" for i in range(n_layers)}
    path = folder / "map.json"
    path.write_text(json.dumps(mapping))
    return str(path)


def load_as(path: str, case: str, tmp):
    """The checkpoint at `path` in bf16, whole on the CPU or (OFFLOADED) with two blocks on disk."""
    if case == OFFLOADED:
        return load_model(path, dtype="bfloat16", device_map=offload_map(tmp), offload_folder=str(tmp / "offload"))
    return load_model(path, dtype="bfloat16")


def load_low(case: str, tmp):
    return load_as(save_checkpoint("llama" if case == OFFLOADED else case, tmp / "ckpt"), case, tmp)


@pytest.fixture(autouse=True)
def hashed_encoder(monkeypatch):
    """Routers, ELICIT libraries and ATV generators loaded from a folder embed queries with the hashed stand-in,
    not MiniLM."""
    stand_in_encoders(monkeypatch)


# bf16 on the CPU is slow: the quick tier keeps the Llama and the offloaded one, the full run every family.
BF16_CASES = [case if case == "llama" else pytest.param(case, marks=pytest.mark.slow) for case in FAMILIES]


@pytest.fixture(scope="module", params=[*BF16_CASES, OFFLOADED])
def low(request, tmp_path_factory):
    lm = load_low(request.param, tmp_path_factory.mktemp(request.param))
    if request.param == OFFLOADED:
        assert [lm.device_map[f"model.layers.{i}"] for i in DISK_BLOCKS] == ["disk", "disk"]
        assert lm.layers[DISK_BLOCKS[0]].self_attn.q_proj.weight.device.type == "meta"  # offloaded outside forward
    assert lm.dtype == torch.bfloat16
    return lm


@pytest.fixture(scope="module")
def built(low, tmp_path_factory):
    """Every method built on the low-precision model (ICR from a router saved for it, ELICIT from a library, ATV
    from a generator, all three made on it)."""
    task = builtin_task("sentiment")
    with pytest.MonkeyPatch.context() as mp:
        stand_in_encoders(mp)
        folder = tmp_path_factory.mktemp("router")
        cfg = tiny_configs(router_folder(low, folder), library_file(low, folder), generator_file(low, folder))
        return {name: build_method(low, task, name, cfg.get(name)) for name in REGISTRY}


def test_every_method_builds_and_answers(low, built):
    queries = builtin_task("sentiment").inputs[:3]
    for name, method in built.items():
        preds = method.predict(queries, batch_size=2)
        assert all(abs(sum(p.label_probs.values()) - 1) < 1e-3 for p in preds), name
        state = getattr(method, "state", None)
        if state is not None:  # what a method learns is kept (and trained) in fp32 beside the bf16 model
            learned = [getattr(state, t) for t in state.tensor_dims()] + list(getattr(state, "tensors", {}).values())
            assert learned and all(t.dtype == torch.float32 for t in learned), name  # LoRA: its `tensors` dict


def test_eval_report_records_the_dtype_and_device_map(low):
    rep = evaluate(low, builtin_task("antonyms"), ["zero-shot", "few-shot"], n_test=3, shots=2)
    assert not rep.failed, {k: v.error for k, v in rep.methods.items()}
    data = rep.to_json()
    assert data["dtype"] == "bfloat16" and data["device_map"] == low.device_map


def test_the_neutral_setting_is_zero_shot_exactly(low, built):
    """Every method's neutral setting (the spec's, as test_contract.py checks it in fp32) and an untrained router:
    zero-shot bit for bit in bf16 and offloaded (the untrained adapter on an open task too: the decoding path)."""
    queries = builtin_task("sentiment").inputs[:4]
    for name, method in built.items():
        if REGISTRY[name].neutral is not None:
            assert_zero_shot_exactly(REGISTRY[name].neutral(method), queries)
    assert_zero_shot_exactly(built["icr"], queries)  # the router is untrained: α = 0
    train, test = split(builtin_task("antonyms"), 3, seed=0)
    untrained = build_method(low, train, "lora", replace(TINY_LORA, steps=0))
    assert_zero_shot_exactly(untrained, test.inputs)


def test_every_figure_draws(low, built):
    from icr_app.app.i18n import say
    from icr_app.methods.elicit.figures import picks_figure
    from icr_app.methods.function_vector.figures import aie_figure
    from icr_app.methods.i2cl.figures import coefficient_figure
    from icr_app.methods.icr.figures import routing_figures
    from icr_app.methods.icv.figures import sweep_figure
    from icr_app.methods.lora.figures import training_curve
    from icr_app.methods.site.figures import alpha_heatmap
    from icr_app.methods.task_vector.figures import layer_figure

    figures = [alpha_heatmap(built["site"].state, say), layer_figure(built["task-vector"].state, say),
               aie_figure(built["function-vector"].state, say), coefficient_figure(built["i2cl"].state, say),
               sweep_figure(built["icv"].state, say), training_curve(built["lora"].state, say),
               picks_figure(built["elicit"].state, say),
               *routing_figures(built["icr"].router, say, "a fine film")]
    assert all(fig.data for fig in figures)
    task = builtin_task("sentiment")
    flow = anchors.flow(low, task, 2, 2, 0)
    assert all(len(curve) == low.n_layers for curve in flow["result"]["raw"].values())
    prompts = task_prompts(low, task, 3, 2, 0)
    assert isolation_experiment(low, prompts, task.labels, k=1)[0].loyalty == 1.0
    train, few = fixed_demo_prompts(low, task, 3, None, 0, Template())
    assert reweight_experiment(low, task, train, few, Template(), per_class=1, epochs=1).beta_abs_mean > 0
    for kind in ("compression", "confusion"):
        try:
            assert anchors.experiment(low, task, kind, 4, 2, 0)
        except ValueError as err:  # compression refuses sliding-window layers
            assert "sliding-window" in str(err)
    report = rank1(low, task, 2, 0)
    assert max(report["max_abs_error"]) <= 1e-5  # computed in fp32, whatever the model's dtype


@pytest.fixture(scope="module")
def fp32_artefacts(tmp_path_factory):
    """SITE, I2CL, ICV and LoRA built on the tiny Llama in fp32 and saved, and an ICR router saved for it."""
    tmp = tmp_path_factory.mktemp("fp32")
    path = save_checkpoint("llama", tmp / "llama")
    lm = load_model(path, dtype="float32")
    task = builtin_task("sentiment")
    cfg = tiny_configs(router_folder(lm, tmp / "router"))
    files = {name: build_method(lm, task, name, cfg[name]).save(tmp / f"{name}.safetensors")
             for name in ("site", "i2cl", "icv", "lora")}
    return lm, path, files, cfg["icr"].router


@pytest.mark.parametrize("case", ["llama", OFFLOADED])
def test_an_fp32_artefact_loads_and_answers_on_a_bf16_and_an_offloaded_model(fp32_artefacts, case, tmp_path,
                                                                              monkeypatch):
    """Artefacts carry the architecture's fingerprint, not the dtype or the device map: the same checkpoint
    loaded in bf16 (and offloaded) takes them, and they say what they were built in."""
    lm32, path, files, router = fp32_artefacts
    low = load_as(path, case, tmp_path)
    queries = builtin_task("sentiment").inputs[:3]
    for name, file in files.items():
        load = REGISTRY[name].load
        method = load(file, low)
        assert method.state.meta.dtype == "float32"
        got, want = method.predict(queries, batch_size=2), load(file, lm32).predict(queries, batch_size=2)
        assert [p.prompt for p in got] == [p.prompt for p in want]
        assert all(abs(sum(p.label_probs.values()) - 1) < 1e-3 for p in got), name
    monkeypatch.setattr(router_module, "minilm_encoder", lambda device: hash_encoder)  # the router's own
    loaded = RouterState.load(Path(router) / FILE, low)
    assert loaded.meta.dtype == "float32"
    assert_zero_shot_exactly(ICRMethod.of(low, loaded, Answering.of(low, builtin_task("sentiment"))), queries)


def test_max_memory_too_small_is_refused_before_loading(tmp_path, capsys):
    path = save_checkpoint("llama", tmp_path / "llama")
    code = main(["eval", "--model", path, "--data", "sentiment", "--n-test", "2", "--max-memory", "cpu=64KiB"])
    err = capsys.readouterr().err
    assert code == 2
    assert "needs 0.66 MiB" in err and "64.0 KiB is available" in err  # the tied output head counted once
    assert "--dtype bfloat16" in err and "--offload-folder" in err


def test_icr_train_runs_the_recipe_with_the_loading_flags(tmp_path):
    """PIDs, then the router, on a bf16 model with two blocks on disk: the router trains in fp32, records the
    dtype it was trained against, and the model's folder of routers serves it."""
    path = save_checkpoint("llama", tmp_path / "llama")
    flags = ["--model", path, "--dtype", "bfloat16", "--device-map", offload_map(tmp_path),
             "--offload-folder", str(tmp_path / "offload")]
    tiny = ["--rank", "2", "--layers", "2,3", "--pid-prompts", "3", "--max-demos", "2", "--examples-per-domain", "6",
            "--holdout", "2", "--epochs", "1", "--batch-size", "2"]
    out = tmp_path / "routers" / "tiny"
    assert main(["icr", "train", *flags, "--domains", "sentiment", "antonyms", "--out", str(out), *tiny]) == 0
    assert (out / "train-log.jsonl").read_text().splitlines()  # the per-step losses, in --out when --log is left out
    low = load_model(path, dtype="bfloat16", device_map=offload_map(tmp_path), offload_folder=str(tmp_path / "offload"))
    router = ICRRouter.load(out, low)
    assert router.meta.dtype == "bfloat16"
    assert all(p.dtype == torch.float32 for p in router.net.parameters())
    assert main(["eval", *flags, "--data", "sentiment", "--methods", "zero-shot,icr", "--n-test", "2",
                 "--icr-router", str(tmp_path / "routers")]) == 0


def test_loading_options_from_the_environment_and_their_refusals(tmp_path, monkeypatch):
    """ICL_LAB_* give the options at the edges (`LoadOptions.from_env`: the CLI, a Space's app.py), which hand them
    to `load_model`; a map sending blocks to disk wants a folder."""
    path = save_checkpoint("llama", tmp_path / "llama")
    monkeypatch.setenv("ICL_LAB_DTYPE", "bfloat16")
    monkeypatch.setenv("ICL_LAB_MAX_MEMORY", "0=20GiB,cpu=60GiB")
    options = LoadOptions.from_env()
    assert options.memory() == {0: 20 * 2**30, "cpu": 60 * 2**30} and options.device_map_arg() == "auto"
    monkeypatch.delenv("ICL_LAB_MAX_MEMORY")
    assert load_model(path, LoadOptions.from_env()).dtype == torch.bfloat16
    with pytest.raises(ModelTooLargeError, match="sends weights to disk; give --offload-folder"):
        load_model(path, LoadOptions.from_env(), device_map=offload_map(tmp_path))
    with pytest.raises(ValueError, match="DEVICE=SIZE"):
        LoadOptions(max_memory="20GiB").memory()


def _fake_source(tmp_path, monkeypatch, name, fail=False):
    """A GGUF source whose package assembles the file from chunks, as Gemma's wheels do, in a cache of the test's
    own; the package records which files the folder held while it wrote, and can fail half way."""
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text(
        "from pathlib import Path\n"
        "seen = []\n"
        "def assemble(output_path, overwrite=False):\n"
        "    path = Path(output_path)\n"
        "    with path.open('wb') as f:\n"
        "        f.write(b'half')\n"
        "        seen.append(sorted(p.name for p in path.parent.iterdir()))\n"
        f"        if {fail}:\n"
        "            raise OSError('disk full')\n"
        "        f.write(b' and the rest')\n"
        "    return path\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("ICL_LAB_CACHE", str(tmp_path / "cache"))
    source = GGUFSource(package=name, filename="m.gguf", hub_id="x/y", install_hint="pip install x", assembled=True)
    return source, tmp_path / "cache" / "gguf" / "m.gguf"


@pytest.mark.parametrize("fail", [False, True])
def test_an_assembled_gguf_appears_whole_or_not_at_all(fail, tmp_path, monkeypatch):
    """Two processes loading Gemma at once once read a half-assembled file (a reshape error); a crash left it
    truncated for every later load. The file is written under a private name and renamed when whole."""
    name = f"fake_gguf_{'fail' if fail else 'ok'}"
    source, target = _fake_source(tmp_path, monkeypatch, name, fail)
    if fail:
        with pytest.raises(OSError, match="disk full"):
            source.locate()
        assert list(target.parent.iterdir()) == []  # nothing truncated left for the next load to trust
        return
    assert source.locate() == target
    assert target.read_bytes() == b"half and the rest"
    (written,), = importlib.import_module(name).seen
    assert written.startswith(f"m.gguf.tmp{os.getpid()}-")  # never visible under its own name half-written
    assert [p.name for p in target.parent.iterdir()] == ["m.gguf"]


def test_two_threads_assembling_at_once_write_apart(tmp_path, monkeypatch):
    """Two users of one page loading Gemma on a new machine: each thread writes a file of its own, both wait
    until the other has begun, and the file left is whole."""
    source, target = _fake_source(tmp_path, monkeypatch, "fake_gguf_threads")
    package = importlib.import_module("fake_gguf_threads")
    both_begun = threading.Barrier(2, timeout=30)
    assemble = package.assemble
    monkeypatch.setattr(package, "assemble", lambda path, overwrite=False: (both_begun.wait(), assemble(path))[1])
    threads = [threading.Thread(target=source.locate) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    written = {name for names in package.seen for name in names if name != "m.gguf"}
    assert len(written) == 2  # two private names, where one shared name had let each truncate the other's file
    assert target.read_bytes() == b"half and the rest"
    assert [p.name for p in target.parent.iterdir()] == ["m.gguf"]
