"""LoRA's settings: what gets adapters, their rank and scale, and the training budget."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class LoraConfig:
    """Defaults sized for 2 CPU cores (`lora.method`'s docstring says how they were chosen)."""

    targets: Literal["attention", "all-linear"] = field(default="attention", metadata={
        "help": "which weights get adapters: the family's attention projections (q/v, or its fused qkv), or "
                "every linear layer but the output head (attention and MLP)"})
    rank: int = field(default=8, metadata={"help": "r, the rank of each update B·A"})
    alpha: int = field(default=16, metadata={"help": "lora_alpha: the update is scaled by alpha / rank"})
    dropout: float = field(default=0.05, metadata={"help": "dropout on the adapters' input while training"})
    lr: float = field(default=5e-4, metadata={"help": "AdamW learning rate (constant, no weight decay)"})
    steps: int = field(default=40, metadata={"help": "at most this many training steps"})
    batch_size: int = field(default=4, metadata={"help": "examples per training step"})
    max_examples: int = field(default=80, metadata={
        "help": "training examples (fit + validation) drawn from the train split"})
    val_fraction: float = field(default=0.2, metadata={"help": "share of those kept to validate (early stopping)"})
    eval_every: int = field(default=10, metadata={"help": "validate every this many steps"})
    patience: int = field(default=3, metadata={"help": "stop after this many validations without improvement"})
