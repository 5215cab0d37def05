"""The validation sweep behind iterative-vector's defaults: build once per extraction setting, then score the
held-out items at several answer strengths (icr_app/methods/iterative_vector/README.md has the result).

Each task is split as `icl-lab suite --seeds 100` splits it (10 training examples at least), with `--n-test`
items held out; run it on a validation group of built-in tasks, never on the tables' test sets:

    python bench/iterative_vector_strengths.py --tasks emotion,headline-topic,sarcasm,past-tense \
        --settings "episodes=30" "episodes=30,extraction_strength=0.3"
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import icr_app as icl
from icr_app.core.tasks import builtin_task, split
from icr_app.methods import build_method
from icr_app.methods.base import is_correct
from icr_app.methods.iterative_vector.method import IterativeVectorConfig, IterativeVectorMethod


def setting(text: str) -> IterativeVectorConfig:
    """"episodes=30,extraction_strength=0.3" -> the config with those fields (numbers as the fields' types)."""
    fields = IterativeVectorConfig.__dataclass_fields__
    pairs = [kv.split("=", 1) for kv in text.split(",") if kv]
    return IterativeVectorConfig(**{k: type(fields[k].default)(v) for k, v in pairs})


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--tasks", required=True, help="comma list of built-in tasks")
    p.add_argument("--settings", nargs="+", default=[""], help="config fields per build, e.g. episodes=30")
    p.add_argument("--strengths", default="0,0.25,0.5,0.75,1", help="answer strengths scored per build")
    p.add_argument("--seed", type=int, default=100)
    p.add_argument("--n-test", type=int, default=48)
    args = p.parse_args()
    lm = icl.load_model(args.model)
    strengths = [float(s) for s in args.strengths.split(",")]
    for name in args.tasks.split(","):
        train, test = split(builtin_task(name), args.n_test, seed=args.seed, min_train=10)
        for text in args.settings:
            t0 = time.perf_counter()
            built = build_method(lm, train, "iterative-vector", setting(text), seed=args.seed)
            build_s = time.perf_counter() - t0
            accuracy = []
            for s in strengths:
                state = replace(built.state, meta=replace(built.state.meta, strength=s))
                preds = IterativeVectorMethod(lm, state).predict([e.input for e in test.examples])
                accuracy.append(sum(is_correct(q, e.output) for q, e in zip(preds, test.examples)) / len(preds))
            print(f"{name} (n={len(test.examples)}) [{text}] build {build_s:.0f} s: "
                  + " ".join(f"s={s:g} {a:.3f}" for s, a in zip(strengths, accuracy)), flush=True)


if __name__ == "__main__":
    main()
