"""LoRA's adapter rounded to fp16 (as built and stored) beside the fp32 one it was rounded from: answers on the eval
split of built-in tasks, default model (docs/notebook/app.md, "Every method prebuilt").

    PYTHONPATH=. python bench/lora_fp16.py sentiment headline-topic spam

The build is run once per task; the fp32 adapter is the peft state dict the build reads before it rounds it.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from icr_app.core.models import load_model
from icr_app.core.tasks import builtin_task, split
from icr_app.methods.base import Answering, BuildContext
from icr_app.methods.lora import method as lora
from icr_app.methods.lora.config import LoraConfig


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="+")
    ap.add_argument("--n-test", type=int, default=24)
    args = ap.parse_args()
    lm = load_model("smollm2-135m")
    kept: dict = {}
    read = lora.get_peft_model_state_dict

    def keeping(model):  # the build's fp32 tensors, before it rounds them
        out = read(model)
        kept["fp32"] = {k: v.detach().float().cpu().clone() for k, v in out.items()}
        return out

    lora.get_peft_model_state_dict = keeping
    for name in args.tasks:
        train, test = split(builtin_task(name), args.n_test, 0, min_train=10)
        half = lora.build(BuildContext(lm=lm, train=train, answering=Answering.of(lm, train), seed=0), LoraConfig())
        full = lora.LoraMethod(lm, replace(half.state, tensors=kept["fp32"]))
        rounding = max(float((half.state.tensors[k] - v).abs().max() / v.abs().max().clamp_min(1e-12))
                       for k, v in kept["fp32"].items())
        a, b = half.predict(test.inputs), full.predict(test.inputs)
        same = sum(x.prediction == y.prediction for x, y in zip(a, b))
        moved = max(abs(x.label_probs[k] - y.label_probs[k]) for x, y in zip(a, b) for k in x.label_probs)
        acc = [sum(p.prediction == y for p, y in zip(preds, test.outputs)) / len(test.inputs) for preds in (a, b)]
        print(f"{name}: n {len(test.inputs)}, same prediction {same}/{len(test.inputs)}, largest change of a label "
              f"probability {moved:.1e}, largest relative rounding {rounding:.1e}, accuracy fp16 {acc[0]:.3f} "
              f"fp32 {acc[1]:.3f}", flush=True)


if __name__ == "__main__":
    main()
