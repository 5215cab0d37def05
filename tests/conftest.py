import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tiny import tiny_lm  # noqa: E402

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "fv"


@pytest.fixture(scope="session")
def lm():
    """One tiny model for the whole session; tests must leave it as they found it."""
    return tiny_lm()


@pytest.fixture(scope="session")
def sharp_lm():
    """A tiny model whose attention matters: with random q/k weights this small, attention is almost uniform
    and whatever a method changes at one position barely reaches the others."""
    import torch

    lm = tiny_lm(seed=1)
    with torch.no_grad():
        for layer in lm.layers:
            layer.self_attn.q_proj.weight.mul_(8.0)
            layer.self_attn.k_proj.weight.mul_(8.0)
        lm.model.get_input_embeddings().weight.mul_(3.0)
    return lm


@pytest.fixture(scope="session")
def tiny_checkpoint(lm, tmp_path_factory) -> str:
    """The tiny model saved as a local checkpoint folder, for the CLI (which loads models by name or path)."""
    path = tmp_path_factory.mktemp("ckpt") / "tiny"
    lm.model.save_pretrained(path)
    lm.tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def real_lm():
    """The real default model (slow tests only)."""
    from icr_app.core.models import load_model

    return load_model()


@pytest.fixture
def shared_data() -> Path:
    """The reference task files beside the checkout (CI lays them there); skip where they are absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is not present beside this checkout")
    return SHARED_DATA


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium, driven by Playwright, for one test module (tests/browser.py has the helpers)."""
    from browser import ARGS, CHROMIUM

    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()
