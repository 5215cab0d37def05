"""Which refinement the state vector defaults to: average, inner and momentum side by side on a validation group.

The validation group is the one the other defaults were chosen on (docs/notebook/defaults-per-model.md):
emotion, headline-topic, sarcasm and past-tense, none of them in a paper group or `bench/fresh*`. Each task's
whole example set is the training split here (no test item is involved): the state vector's own holdout keeps
half of it to validate on, its prompts come from the rest. The states are read once per task and seed (the
prompts of `StateVectorConfig()`), each mode's vector is made from the same trajectory, and every (mode, n) pair,
the first n layers edited, is scored on the held-out half in one pass per query (`last_token_variants`).

    python bench/state_vector_modes.py [--model smollm2-135m] [--tasks emotion,past-tense] [--seeds 0,1] [--out F]

Prints, per task, seed and mode, the held-out accuracy at the best n (and that n), then each mode's mean.
"""

from __future__ import annotations

import argparse
import json

import torch

import icr_app as icl
from icr_app.core.capture import head_outputs
from icr_app.core.tasks import builtin_task
from icr_app.methods.base import Answering, Method
from icr_app.methods.last_token import gold_and_candidates, last_token_variants
from icr_app.methods.state_vector.method import StateVectorConfig, holdout, sampled
from icr_app.methods.state_vector.reading import inner, momentum, separator_states

TASKS = ("emotion", "headline-topic", "sarcasm", "past-tense")
MODES = ("average", "inner", "momentum")


def mode_vectors(lm, pool, template, cfg: StateVectorConfig, k: int, seed: int) -> torch.Tensor:
    """(modes, L, width): each mode's vector from one trajectory."""
    trajectory = separator_states(lm, sampled(lm, pool, template, cfg.n_prompts, k, seed), cfg.batch_size)
    return torch.stack([trajectory[-1], inner(trajectory, cfg.inner_window),
                        momentum(trajectory, cfg.inner_window, cfg.momentum_steps, cfg.momentum_decay,
                                 cfg.momentum_lr)])


def held_out_accuracy(lm, method: Method, vectors: torch.Tensor, val) -> torch.Tensor:
    """(modes, L): accuracy on `val` with mode m's first n + 1 layers written at the last token."""
    n_modes, n_layers = vectors.shape[:2]
    gold, candidates = gold_and_candidates(lm, method, [e.output for e in val])

    def patch(layer: int, x: torch.Tensor, variants: torch.Tensor) -> torch.Tensor:
        mode, n = variants // n_layers, variants % n_layers
        v = vectors[mode, layer].to(x.device, x.dtype)  # (C, width)
        return torch.where((n >= layer)[None, :, None], v[None].expand_as(x), x)

    scores = last_token_variants(lm, [method.prompt(e.input) for e in val], gold, candidates, n_modes * n_layers,
                                 head_outputs(lm), patch, "input", 4)
    return scores.hit.float().mean(0).view(n_modes, n_layers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--shots", type=int, default=10)
    parser.add_argument("--out")
    args = parser.parse_args()
    lm, cfg, rows = icl.load_model(args.model), StateVectorConfig(), []
    for name in args.tasks.split(","):
        task = builtin_task(name)
        for seed in map(int, args.seeds.split(",")):
            method = Method(lm, Answering.of(lm, task))
            pool, val = holdout(task, len(task.examples) // 2, seed)
            k = min(args.shots, len(pool.examples) - 1)
            acc = held_out_accuracy(lm, method, mode_vectors(lm, pool, method.template, cfg, k, seed), val)
            for mode, row in zip(MODES, acc):
                rows.append({"task": name, "seed": seed, "mode": mode, "n_val": len(val),
                             "best": float(row.max()), "n": int(row.argmax()) + 1, "per_n": row.tolist()})
                print(f"{name:15} seed {seed} {mode:9} best {row.max():.3f} at n = {int(row.argmax()) + 1}",
                      flush=True)
    for mode in MODES:
        best = [r["best"] for r in rows if r["mode"] == mode]
        print(f"{mode:9} mean best held-out accuracy {sum(best) / len(best):.3f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
