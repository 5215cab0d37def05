"""A LoRA built by ICL Lab, exported as a PEFT folder and loaded by peft onto the built-in checkpoint, answers as in
ICL Lab; and an adapter made with peft on that checkpoint answers in ICL Lab as in peft (docs/elsewhere.md).

    PYTHONPATH=. python bench/peft_roundtrip.py sentiment headline-topic --n-test 50

Per task: LoRA built with its defaults on the train split (seed 0), `icl.export(method, "peft", folder)`, then
`PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(icl.checkpoint()), folder)`. Compared on the test
split's zero-shot prompts: the largest |difference| of the last position's logits (whole vocabulary), the largest
|difference| of a label probability (both read by ICL Lab's scorer, peft's model wrapped with `icl.wrap`), and the
predictions that are the same. Then the other way: peft's own adapter (rank 8 on q/v, B drawn at random, std
0.02) saved by `save_pretrained`, read by `icl.load`, the same logits compared.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import AutoModelForCausalLM

import icr_app as icl
from icr_app.core.tasks import builtin_task, split
from icr_app.methods.base import Method


def checkpoint_model() -> torch.nn.Module:
    return AutoModelForCausalLM.from_pretrained(icl.checkpoint(), dtype=torch.float32).eval()


def last_logits(model: torch.nn.Module, lm: icl.LoadedModel, prompts: list[str]) -> torch.Tensor:
    with torch.no_grad():
        return torch.cat([model(**lm.encode(prompts[s: s + 8])).logits[:, -1] for s in range(0, len(prompts), 8)])


def exported(lm: icl.LoadedModel, name: str, n_test: int, out: Path) -> None:
    train, test = split(builtin_task(name), n_test, 0, min_train=10)
    method = icl.build("lora", lm, train, seed=0)
    peft_model = PeftModel.from_pretrained(checkpoint_model(), icl.export(method, "peft", out / name)).eval()
    prompts = [method.prompt(x) for x in test.inputs]
    diff = (last_logits(method.tuned.lm.model, lm, prompts) - last_logits(peft_model, lm, prompts)).abs().max()
    ours = method.predict(test.inputs)
    theirs = Method(icl.wrap(peft_model.get_base_model(), lm.tokenizer), method.answering).predict(test.inputs)
    same = sum(a.prediction == b.prediction for a, b in zip(ours, theirs))
    moved = max(abs(a.label_probs[k] - b.label_probs[k]) for a, b in zip(ours, theirs) for k in a.label_probs)
    print(f"ICL Lab -> PEFT, {name}: n {len(prompts)}, max |logit diff| {float(diff):.2e}, max |label prob diff| "
          f"{moved:.2e}, same prediction {same}/{len(prompts)}", flush=True)


def made_with_peft(lm: icl.LoadedModel, n_test: int, out: Path) -> None:
    torch.manual_seed(0)
    peft_model = get_peft_model(checkpoint_model(), LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"],
                                                               task_type="CAUSAL_LM"))
    with torch.no_grad():
        for n, p in peft_model.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.02)
    peft_model.save_pretrained(out / "peft-made")
    method = icl.load(out / "peft-made", lm)
    prompts = [method.prompt(x) for x in split(builtin_task("sentiment"), n_test, 0, min_train=10)[1].inputs]
    ours, theirs = last_logits(method.tuned.lm.model, lm, prompts), last_logits(peft_model.eval(), lm, prompts)
    zero = last_logits(lm.model, lm, prompts)
    same = int((ours.argmax(-1) == theirs.argmax(-1)).sum())
    print(f"PEFT -> ICL Lab (random B): n {len(prompts)}, max |logit diff| {float((ours - theirs).abs().max()):.2e} "
          f"(the adapter moves them by up to {float((theirs - zero).abs().max()):.2f}), same next token "
          f"{same}/{len(prompts)}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="+")
    ap.add_argument("--n-test", type=int, default=50)
    args = ap.parse_args()
    lm = icl.load_model("smollm2-135m")
    with tempfile.TemporaryDirectory() as out:
        for name in args.tasks:
            exported(lm, name, args.n_test, Path(out))
        made_with_peft(lm, args.n_test, Path(out))


if __name__ == "__main__":
    main()
