"""Run I2CL's authors' pipeline (set up by i2cl_setup.sh) on one handed-over split and keep what it measured.

    cd $PARITY_SRC/patched/i2cl && \
        $PARITY_SRC/venvs/parity-i2cl/bin/python <repo>/bench/parity/i2cl_authors.py \
        --model $PARITY_RUN/smollm2-135m --data $PARITY_RUN/data --task sentiment-s0-i2cl \
        --out $PARITY_RUN/i2cl/sentiment-s0-i2cl/authors

Runs in the authors' environment, never in ICL Lab's. Their `run_i2cl.main` runs unchanged, with their
`configs/config_i2cl.py` changed only where our data and model force it: the model (our checkpoint), the dataset
(the handed-over unit), the seed (the split's), the example separator (ICL Lab's "\\n\\n"), where results go, and
one run instead of their five (`--runs`; each run draws its own demonstrations and calibrates anew). Everything
else is theirs: 5 demonstrations per class, each run alone for the context vectors (the attention's and MLP's
outputs at its last token, averaged), 100 epochs of AdamW (lr 0.01, wd 1e-3) on batches of 2 of those same
demonstrations as zero-shot prompts, noise 0.001, the first answer token's cross-entropy over the vocabulary;
test items scored by the argmax over the labels' first tokens. Their data comes from the hub through one class
per dataset (`my_datasets`); `HandedTask` below is such a class over the handed-over records, with ICL Lab's
template ("Input: {x}\\nOutput:", the answer after a space), registered under the unit's name.

Five of their functions are wrapped to keep what they compute, nothing else changed: the model wrapper (for the
coefficients), the context vectors, the demonstrations drawn, each evaluation's logits at the answer position (a
forward hook on the model while their `Evaluator.evaluate` runs; the per-item prediction is rebuilt from them as
their evaluator does and checked against their accuracy), and whether the injection was live. Writes
`items.json` (per test item, in order: their hit, predicted label and first-token ids, for I2CL, their few-shot
and zero-shot; their prompts and demonstrations; their timings; the probe logits; the settings) and
`learnt.safetensors` (`coef` (L, 2, 2) and `vectors` (L, 2, d), modules in their order: mlp, attn).
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import torch
from safetensors.torch import save_file
from site_authors import probe_logits, unit_parser

TEMPLATE = {"input": "Input: {text}\nOutput:", "ans": "{answer}", "format": ["Input:", "Output:"]}  # ICL Lab's
SEPARATOR = "\n\n"  # ICL Lab's Template.sep, in place of their config's '\n'
PARTS = {"train": "train", "validation": "valid", "test": "test"}  # their split names -> handed-over files


def main() -> None:
    ap = unit_parser(__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, help="their config's seed (default: the split's seed)")
    ap.add_argument("--runs", type=int, default=1, help="their run_num (they use 5); items.json keeps the first")
    ap.add_argument("--epochs", type=int, help="calibration epochs (default: theirs, 100)")
    args = ap.parse_args()
    sys.path.insert(0, str(Path.cwd()))
    import evaluator as ev
    import global_vars as gv
    import my_datasets as md
    import run_i2cl
    import utils
    import wrapper

    folder = args.data / args.task
    meta = json.loads((folder / "split.json").read_text())
    labels = list(meta["labels"])
    parts = {p: json.loads((folder / f"{p}.json").read_text()) for p in PARTS.values()}
    drawn: list[tuple[str, list[str], list[int]]] = []

    class HandedTask(md.BaseTask):
        """Their dataset class over the handed-over records: a classification task with ICL Lab's template."""

        def __init__(self, split="train", *a, **kw):
            super().__init__(*a, **kw)
            self.task_type = "classification"
            self.class_num = len(labels)
            self.all_data = [dict(r) for r in parts[PARTS[split]]]
            self.all_labels = self.get_all_labels()
            if self.max_data_num is not None:  # their val/test caps (32, 500) exceed ours: all kept, in order
                self.random_sample_data(self.max_data_num)

        def get_dmonstration_template(self):
            return {**TEMPLATE, "options": labels}

        def get_task_instruction(self):
            return ""

        def apply_template(self, data):
            return (TEMPLATE["input"].replace("{text}", data["input"]),
                    [TEMPLATE["ans"].replace("{answer}", o) for o in labels], labels.index(data["output"]))

        def get_all_labels(self):
            return [labels.index(d["output"]) for d in self.all_data]

        def gen_few_shot_demonstration(self, *a, **kw):
            out = super().gen_few_shot_demonstration(*a, **kw)
            drawn.append((out[0], list(out[1]), list(out[2])))
            return out

    md.dataset_dict[args.task] = HandedTask

    # their save dir is exp_name/model_name/dataset; a local model path would put it inside the checkpoint folder
    init_exp_path = utils.init_exp_path

    def init_under_out(a, exp_name, separate_dataset=True):
        name, a.model_name = a.model_name, Path(a.model_name).name
        try:
            init_exp_path(a, exp_name, separate_dataset)
        finally:
            a.model_name = name

    utils.init_exp_path = init_under_out
    wrappers, vectors, evaluations, live = [], [], [], {"inject": False}
    get_model_wrapper = utils.get_model_wrapper
    utils.get_model_wrapper = lambda *a: wrappers.append(get_model_wrapper(*a)) or wrappers[-1]
    get_context_vector = wrapper.ModelWrapper.get_context_vector

    def keep_vectors(self, *a, **kw):
        out = get_context_vector(self, *a, **kw)
        vectors.append(copy.deepcopy(out))  # their main turns the dict into lists afterwards
        return out

    wrapper.ModelWrapper.get_context_vector = keep_vectors
    inject_latent = wrapper.ModelWrapper.inject_latent

    @contextmanager
    def flagged(self, *a, train_mode=False, **kw):
        with inject_latent(self, *a, train_mode=train_mode, **kw):
            live["inject"] = not train_mode
            try:
                yield
            finally:
                live["inject"] = False

    wrapper.ModelWrapper.inject_latent = flagged
    evaluate = ev.Evaluator.evaluate

    def recorded(self, model_wrapper, tokenizer, demonstration="", use_cache=False):
        rows: list[torch.Tensor] = []

        def at_answer(module, inputs, kwargs, output):  # their evaluator sets gv.ATTN_MASK_END before each query
            if demonstration and use_cache and kwargs.get("past_key_values") is None:
                return  # the pass that caches the few-shot demonstration, not a query
            logits = output.logits
            rows.append(logits[torch.arange(logits.size(0)), gv.ATTN_MASK_END].detach().float().clone())

        handle = model_wrapper.model.register_forward_hook(at_answer, with_kwargs=True)
        try:
            result = evaluate(self, model_wrapper, tokenizer, demonstration, use_cache)
        finally:
            handle.remove()
        if sum(len(r) for r in rows) != len(self.dataset):
            raise SystemExit(f"kept {sum(len(r) for r in rows)} answer rows for {len(self.dataset)} items")
        side = "i2cl" if live["inject"] else "few-shot" if demonstration else "zero-shot"
        evaluations.append({"dataset": self.dataset, "side": side, "logits": torch.cat(rows), "result": result})
        return result

    ev.Evaluator.evaluate = recorded

    config = utils.load_config("configs/config_i2cl.py")
    seed = meta["seed"] if args.seed is None else args.seed
    changed = {"exp_name": str(args.out / "exps"), "models": [args.model], "datasets": [args.task], "seed": seed,
               "run_num": args.runs, "example_separator": SEPARATOR}
    if args.epochs is not None:
        changed["epochs"] = args.epochs
    config.update(changed)
    shutil.rmtree(args.out, ignore_errors=True)  # their init_exp_path refuses an existing experiment
    t0 = time.perf_counter()
    run_i2cl.main(argparse.Namespace(model_name=args.model, dataset_name=args.task, gpu="0", config=config))
    wall = time.perf_counter() - t0

    model_wrapper = wrappers[0]
    model, tokenizer = model_wrapper.model, model_wrapper.tokenizer
    test = [e for e in evaluations if e["dataset"].all_data == parts["test"]]
    gold = [labels.index(r["output"]) for r in parts["test"]]
    label_ids = [tokenizer.encode(" " + o, add_special_tokens=False)[0] for o in labels]  # their label_map, patched
    items: dict = {"labels": labels, "label_ids": label_ids, "gold": gold}
    for side in ("i2cl", "few-shot", "zero-shot"):
        logits = next(e for e in test if e["side"] == side)  # the first run's
        pred = logits["logits"][:, label_ids].argmax(-1).tolist()
        hits = [p == g for p, g in zip(pred, gold)]
        if abs(sum(hits) / len(hits) - logits["result"]["acc"]) > 1e-9:
            raise SystemExit(f"{side}: the per-item rebuild ({sum(hits)}/{len(hits)}) is not their accuracy "
                             f"{logits['result']}")
        items[side] = hits
        items.setdefault("pred", {})[side] = pred
        items.setdefault("vocab_argmax", {})[side] = logits["logits"].argmax(-1).tolist()
        items.setdefault("their_result", {})[side] = logits["result"]
    demon, split_demon, index = drawn[0]
    train = HandedTask("train", task_name=args.task).all_data
    items |= {
        "prompts": [HandedTask("test", task_name=args.task).apply_template(r)[0] for r in parts["test"]],
        "demos": {"texts": split_demon, "records": [train[i] for i in index], "few_shot_prefix": demon},
        "probe": probe_logits(model, tokenizer, parts["test"][0]["input"]),
        "time": {"wall_s": wall, **json.loads((Path(model_wrapper_save_dir(args)) / "result_dict.json")
                                              .read_text())["time"]},
        "settings": {k: v for k, v in config.items() if isinstance(v, (int, float, str, bool, list))},
        "modules": list(config["module"]),
    }
    (args.out / "items.json").write_text(json.dumps(items, indent=1, ensure_ascii=False))
    cv = vectors[0]
    learnt = {"coef": model_wrapper.linear_coef.detach().float().contiguous(),
              "vectors": torch.stack([torch.stack([cv[layer][m].float() for m in config["module"]])
                                      for layer in sorted(cv)]).contiguous()}
    save_file(learnt, str(args.out / "learnt.safetensors"))
    print(json.dumps({side: sum(items[side]) / len(items[side]) for side in ("i2cl", "few-shot", "zero-shot")}
                     | {"wall_s": round(wall, 1)}))


def model_wrapper_save_dir(args: argparse.Namespace) -> Path:
    """Where their main wrote result_dict.json (exp_name/model folder name/dataset, as init_under_out sets it)."""
    return args.out / "exps" / Path(args.model).name / args.task


if __name__ == "__main__":
    main()
