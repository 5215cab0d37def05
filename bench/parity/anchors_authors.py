"""Run one of the anchors authors' scripts (anchors_setup.sh) on one handed-over unit; keep the results.

    cd $PARITY_SRC/patched/anchors && \
        $PARITY_SRC/venvs/parity-anchors/bin/python <repo>/bench/parity/anchors_authors.py \
        --model $PARITY_RUN/smollm2-135m --data $PARITY_RUN/data --task sentiment-s0-anchors \
        --out $PARITY_RUN/anchors/sentiment-s0-anchors/authors

Runs in the authors' environment, never in ICL Lab's. Their `attention_attr.py` runs as their README says to run
it (`python attention_attr.py --task_name ... --demonstration_shot 1`, their defaults otherwise: sample_size 1000,
which takes every handed-over test item), as `__main__`, with the changes anchors_setup.sh makes: the task
`icllab` reads the unit's folder ($ICLLAB_DATA), and each test item takes the demonstrations ICL Lab chose for it.
Their loop is theirs: a forward pass with their attention hook (`LlamaAttentionerManager`), the cross-entropy over
the label words' first tokens, a backward pass, and `get_proportion` on each layer's |Σ_h A ⊙ ∂L/∂A| at the
positions their `Predictor.get_pos` finds. Its results are read from the script's namespace: `pros_list` (per item,
S_wp, S_pq, S_ww per layer) and the prompts it built. Writes `items.json`: per handed-over test item, in the
hand-over's order, their prompt text, token ids, label-word and final positions and the three flows per layer;
their settings; the probe logits.

With `--analysis isolation` (a unit `compare_anchors.py handover --analysis isolation` wrote, whose items share
one demonstration set) it runs their isolation instead: `do_shallow_layer.py` as `__main__`, as their
experiment_shallow.py runs it, once per condition (`CONDITIONS`: no isolation, `--mask_layer_num 0`; the label
words isolated in the first and in the last K layers, K their default 5), then `do_shallow_layer_non_label.py`,
their random-token control, in the first and last K. Each run is their `shallow_layer`: their Trainer's predict
over the wrapped and tokenised test items with their `AttentionAdapter` (window 0) in the chosen layers. What their
`tokenize_dataset` returned (the items in their shuffled order, the prompts, the token ids) is kept by wrapping it;
the predictions are read from the pickle their run saves, as their shallow_analysis.ipynb reads them (the label is
the argmax of the label words' probabilities). Writes `isolation.json`: per condition and per handed-over item, in
the hand-over's order, the predicted label and the label words' logits; per item the prompt, token ids, and the
label-word and final positions their adapter finds; their settings.

With `--analysis compression` (a unit of `handover --analysis compression`: the shared set again) it runs
`do_compress.py` as `__main__`, as their experiment_compress.py runs it, once: their four runs in one pass. Their
cache is the first test item's prompt run once, its keys and values kept at the positions `ContextSolver.get_mask`
finds (the demonstrations' formatting and label words); Hidden_anchor answers each bare test query against it,
its positions starting after the last kept one; then Hidden_random (each label word swapped for a random
demonstration token before it), full ICL and Text_anchor (the demonstrations' text removed, formatting and labels
kept, as a prompt). `--design matched` (the default) keeps the "\n\n" separator's last token before the query too,
as ICL Lab does; `--design ported` leaves their strings to decide (anchors_setup.sh's change 6 says why they
differ). Writes `compression-<design>.json`: per run and per handed-over item the predicted label and the label
words' logits; the kept positions and the query's first position; per item the prompt and token ids.

With `--analysis reweighting` (a unit of `handover --analysis reweighting`: the shared set, ICL Lab's training
examples and their order per epoch) it runs `reweighting.py` as `__main__`, as their experiment_reweighting.py runs
it (lr 0.01, 4 training examples per class, 10 epochs; n_head the model's): the weights trained, then the test
items predicted with them and without. Writes `reweighting.json`: both runs per item, the epoch losses, the learnt
weights (layer, head, class) and their settings.
"""

from __future__ import annotations

import importlib
import json
import os
import runpy
import sys
import time
from pathlib import Path

import torch
from site_authors import probe_logits, unit_parser

SHOTS = 1  # experiment_attn_attr.py: demonstration_shot 1 (one demonstration per class)
SAMPLE_SIZE = 1000  # experiment_attn_attr.py: sample_size 1000, capped by their script at the test set's size
K = 5  # ShallowArgs.mask_layer_num's default, and the K of the paper's isolation table
# name: (their script, --mask_layer_pos, --mask_layer_num); 0 layers isolates nothing: their unisolated baseline
CONDITIONS = {"none": ("do_shallow_layer.py", "first", 0),
              f"label words, first {K}": ("do_shallow_layer.py", "first", K),
              f"label words, last {K}": ("do_shallow_layer.py", "last", K),
              f"random tokens, first {K}": ("do_shallow_layer_non_label.py", "first", K),
              f"random tokens, last {K}": ("do_shallow_layer_non_label.py", "last", K)}


def main() -> None:
    ap = unit_parser(__doc__.splitlines()[0], "an absolute path: their loader takes it as a local checkpoint",
                     "a folder under --data written by compare_anchors.py handover")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--analysis", choices=["flow", "isolation", "compression", "reweighting"], default="flow")
    ap.add_argument("--design", choices=["matched", "ported"], default="matched",
                    help="compression: keep the separator's last token before the query, as ICL Lab does (matched), "
                         "or let their ContextSolver's strings decide (ported); anchors_setup.sh's change 6")
    args = ap.parse_args()
    unit = (args.data / args.task).resolve()
    os.environ["ICLLAB_DATA"] = str(unit)  # read by their 'icllab' task (anchors_setup.sh)
    sys.path.insert(0, str(Path.cwd()))
    args.out.mkdir(parents=True, exist_ok=True)
    {"flow": flow, "isolation": isolation, "compression": compression, "reweighting": reweighting}[args.analysis](
        args, unit)


def seeded(seed: int) -> None:
    """Their set_seed, which their scripts import but never call. Nothing random is left in the flow or the label
    isolation (the demonstrations are ICL Lab's, the test items' order is mapped back); the random-token control
    draws from Python's `random`, so it is seeded before each run."""
    from icl.utils.random_utils import set_seed

    set_seed(seed)


def flow(args, unit: Path) -> None:
    seeded(args.seed)
    sys.argv = ["attention_attr.py", "--task_name", "icllab", "--model_name", str(Path(args.model).resolve()),
                "--seeds", str(args.seed), "--demonstration_shot", str(SHOTS), "--sample_size", str(SAMPLE_SIZE),
                "--save_folder", str(args.out / "results")]
    t0 = time.perf_counter()
    g = runpy.run_path("attention_attr.py", run_name="__main__")
    seconds = time.perf_counter() - t0
    data, predictor, tokenizer = g["demonstrations_contexted"], g["predictor"], g["tokenizer"]
    pros = g["pros_list"]  # (n, 3, L): S_wp, S_pq, S_ww per layer, in their (shuffled) order
    items = []
    for row, flows in zip(data, pros):
        ids = torch.tensor([row["input_ids"]])
        class_poss, final_pos = predictor.get_pos({"input_ids": ids})
        final = int(final_pos)
        items.append({
            "item": row["item"], "prompt": row["sentence"], "input_ids": row["input_ids"][: final + 1],
            "label_positions": sorted(int(p) for p in torch.hstack(class_poss).flatten()), "final_position": final,
            "label": row["label"], "flows": {k: v.tolist() for k, v in zip(("S_wp", "S_pq", "S_ww"), flows)},
        })
    items.sort(key=lambda r: r["item"])
    test = json.loads((unit / "authors-test.json").read_text())
    if [r["item"] for r in items] != list(range(len(test))):
        raise SystemExit(f"{args.task}: their run kept {len(items)} of the {len(test)} handed-over items")
    out = {"items": items,
           "settings": {"script": "attention_attr.py", "demonstration_shot": SHOTS, "sample_size": SAMPLE_SIZE,
                        "seed": args.seed, "n": len(items), "label_dict": g["args"].label_dict,
                        "seconds": seconds, "seconds_per_item": seconds / len(items)},
           "probe": probe_logits(g["model"].model, tokenizer, test[0]["text"])}
    (args.out / "items.json").write_text(json.dumps(out, indent=1))
    print(json.dumps({"n": len(items), "seconds_per_item": round(seconds / len(items), 2)}))


def their_run(args, name: str) -> tuple[list, object, float]:
    """One condition run by their script as `__main__`: the datasets their tokenize_dataset returned (the test
    items with demonstrations, then without), their saved PredictionOutput, the seconds it took."""
    script, pos, k = CONDITIONS[name]
    module = importlib.import_module(f"icl.analysis.{script[3:-3]}")
    tokenized: list = []
    tokenize = module.tokenize_dataset
    module.tokenize_dataset = lambda dataset, tokenizer: tokenized.append(tokenize(dataset, tokenizer)) or tokenized[-1]
    seeded(args.seed)
    sys.argv = [script, "--task_name", "icllab", "--model_name", str(Path(args.model).resolve()),
                "--seeds", str(args.seed), "--demonstration_shot", str(SHOTS), "--sample_size", str(SAMPLE_SIZE),
                "--mask_layer_pos", pos, "--mask_layer_num", str(k),
                "--save_folder", str(args.out / "results" / name.replace(", ", "-").replace(" ", "_"))]
    t0 = time.perf_counter()
    g = runpy.run_path(script, run_name="__main__")
    seconds = time.perf_counter() - t0
    module.tokenize_dataset = tokenize
    (y,) = g["args"].load_result()[0]  # their pickle: [ys], one PredictionOutput per seed
    return tokenized, y, seconds


def label_positions(args, tokenized) -> list[dict]:
    """Per item, in their order: the prompt, its token ids, and the label-word and final positions that their
    AttentionAdapter (the block itself) finds in it."""
    from icl.analysis.attentioner import AttentionAdapter
    from icl.util_classes.arg_classes import ShallowArgs
    from icl.utils.prepare_model_and_tokenizer import get_label_id_dict_for_args
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(Path(args.model).resolve())
    tokenizer.pad_token = tokenizer.eos_token  # as their load_model_and_tokenizer sets it
    label_ids = get_label_id_dict_for_args(ShallowArgs(task_name="icllab"), tokenizer)
    adapter = AttentionAdapter(label_ids, tokenizer.pad_token_id, "icllab", tokenizer, window_size=0)
    out = []
    for row in tokenized:
        n = sum(row["attention_mask"])
        class_poss, final_pos = adapter.get_pos(torch.tensor([row["input_ids"]]), label_ids, tokenizer.pad_token_id)
        out.append({"item": row["item"], "prompt": row["sentence"], "input_ids": row["input_ids"][:n],
                    "label_positions": sorted(int(p) for p in torch.cat(class_poss, -1).flatten()),
                    "final_position": int(final_pos[0])})
    return out


def isolation(args, unit: Path) -> None:
    test = json.loads((unit / "authors-test.json").read_text())
    conditions, seconds, items = {}, {}, None
    for name in CONDITIONS:
        tokenized, y, seconds[name] = their_run(args, name)
        order = tokenized[0]["item"]  # their shuffled order of the handed-over items
        if sorted(order) != list(range(len(test))):
            raise SystemExit(f"{args.task}: their run kept {len(order)} of the {len(test)} handed-over items")
        probs, logits = y.predictions[0], y.predictions[1]  # (n, classes): their probs and label-word logits
        by_item = sorted(zip(order, probs.argmax(-1).tolist(), logits.tolist()))
        conditions[name] = {"predicted": [p for _, p, _ in by_item], "label_logits": [lg for _, _, lg in by_item]}
        items = items or sorted(label_positions(args, tokenized[0]), key=lambda r: r["item"])
    out = {"items": items, "conditions": conditions, "gold": [r["label"] for r in test],
           "settings": {"scripts": sorted({c[0] for c in CONDITIONS.values()}), "k": K, "window_size": 0,
                        "demonstration_shot": SHOTS, "sample_size": SAMPLE_SIZE, "seed": args.seed, "n": len(test),
                        "seconds": seconds}}
    (args.out / "isolation.json").write_text(json.dumps(out, indent=1))
    print(json.dumps({"n": len(test), "seconds": {k: round(v, 1) for k, v in seconds.items()}}))



# their compress.py's four runs, in the order of its pickle's tuple (y1, y2, y3, y4), by the paper's names
COMPRESS_RUNS = ("Hidden_anchor", "full ICL", "Text_anchor", "Hidden_random")


def cached_positions(args, demo_ids: list[int]) -> list[int]:
    """The positions of the demonstrations' cache that their Hidden_anchor keeps: ContextSolver.get_mask on the
    prompt their cache is computed from (the first test item's, demonstrations and query)."""
    from icl.util_classes.context_solver import ContextSolver
    from transformers import AutoTokenizer

    mask = ContextSolver("icllab", AutoTokenizer.from_pretrained(Path(args.model).resolve())).get_mask(demo_ids)
    return torch.where(mask)[0].tolist()


def compression(args, unit: Path) -> None:
    """Their do_compress.py as `__main__` (as experiment_compress.py runs it), once: its four runs share one pass."""
    os.environ["ICLLAB_COMPRESS_DESIGN"] = args.design  # read by their patched ContextSolver.get_mask
    test = json.loads((unit / "authors-test.json").read_text())
    module = importlib.import_module("icl.analysis.compress")
    tokenized: list = []
    tokenize = module.tokenize_dataset
    module.tokenize_dataset = lambda dataset, tokenizer: tokenized.append(tokenize(dataset, tokenizer)) or tokenized[-1]
    seeded(args.seed)  # their Hidden_random draws from Python's random
    sys.argv = ["do_compress.py", "--task_name", "icllab", "--model_name", str(Path(args.model).resolve()),
                "--seeds", str(args.seed), "--demonstration_shot", str(SHOTS), "--sample_size", str(SAMPLE_SIZE),
                "--save_folder", str(args.out / "results" / f"compress-{args.design}")]
    t0 = time.perf_counter()
    g = runpy.run_path("do_compress.py", run_name="__main__")
    seconds = time.perf_counter() - t0
    module.tokenize_dataset = tokenize
    (ys,) = g["args"].load_result()  # their pickle: one (y1, y2, y3, y4) per seed
    demo, empty, _ = tokenized  # the test items with the demonstrations, with Text_anchor's instruct, bare
    order = demo["item"]
    if sorted(order) != list(range(len(test))):
        raise SystemExit(f"{args.task}: their run kept {len(order)} of the {len(test)} handed-over items")
    runs = {}
    for name, y in zip(COMPRESS_RUNS, ys):
        by_item = sorted(zip(order, y.predictions[0].argmax(-1).tolist(), y.predictions[1].tolist()))
        runs[name] = {"predicted": [p for _, p, _ in by_item], "label_logits": [lg for _, _, lg in by_item]}
    kept = cached_positions(args, demo[0]["input_ids"][: sum(demo[0]["attention_mask"])])
    items = sorted(({"item": r["item"], "prompt": r["sentence"],
                     "input_ids": r["input_ids"][: sum(r["attention_mask"])]} for r in demo), key=lambda r: r["item"])
    out = {"items": items, "runs": runs, "gold": [r["label"] for r in test],
           "cache": {"positions": kept, "query_offset": kept[-1] + 1, "from_item": order[0],
                     "Text_anchor prompt of item 0": empty[0]["sentence"]},
           "settings": {"script": "do_compress.py", "demonstration_shot": SHOTS, "sample_size": SAMPLE_SIZE,
                        "seed": args.seed, "n": len(test), "batch_size": g["args"].batch_size, "seconds": seconds,
                        "design": args.design}}
    (args.out / f"compression-{args.design}.json").write_text(json.dumps(out, indent=1))
    print(json.dumps({"n": len(test), "cached": len(kept), "seconds": round(seconds, 1)}))



# ICL Lab's re-weighting settings (compare_anchors.py's RW): their experiment_reweighting.py's lr 0.01, their defaults
# of 4 training examples per class and 10 epochs; n_head is the model's (theirs: 25, GPT2-XL's)
REWEIGHT = {"lr": 0.01, "train_num_per_class": 4, "epoch_num": 10}


def reweighting(args, unit: Path) -> None:
    """Their reweighting.py as `__main__` (as experiment_reweighting.py runs it): the weights trained on the training
    examples, then the test items predicted with them (y) and without (y2); keeps both and the learnt weights."""
    from transformers import AutoConfig

    test = json.loads((unit / "authors-test.json").read_text())
    module = importlib.import_module("icl.analysis.reweighting")
    tokenized: list = []
    tokenize = module.tokenize_dataset
    module.tokenize_dataset = lambda dataset, tokenizer: tokenized.append(tokenize(dataset, tokenizer)) or tokenized[-1]
    n_head = AutoConfig.from_pretrained(Path(args.model).resolve()).num_attention_heads
    sys.argv = ["reweighting.py", "--task_name", "icllab", "--model_name", str(Path(args.model).resolve()),
                "--seeds", str(args.seed), "--demonstration_shot", str(SHOTS), "--sample_size", str(SAMPLE_SIZE),
                "--n_head", str(n_head), *(f"--{k}={v}" for k, v in REWEIGHT.items()),
                "--save_folder", str(args.out / "results" / "reweighting")]
    t0 = time.perf_counter()
    g = runpy.run_path("reweighting.py", run_name="__main__")
    seconds = time.perf_counter() - t0
    module.tokenize_dataset = tokenize
    (((y, losses, params, y0, _),),) = g["args"].load_result()  # their pickle: [[(y, loss_list, params, y2, loss)]]
    order = tokenized[0]["item"]  # the test items in their shuffled order (the training examples come second)
    runs = {}
    for name, r in (("before", y0), ("after", y)):
        by_item = sorted(zip(order, r.predictions[0].argmax(-1).tolist(), r.predictions[1].tolist()))
        runs[name] = {"predicted": [p for _, p, _ in by_item], "label_logits": [lg for _, _, lg in by_item]}
    out = {"runs": runs, "gold": [r["label"] for r in test], "losses": losses,
           "weights": torch.stack([p.detach() for p in params]).tolist(),  # (layers, heads, classes), by class
           "training prompts": tokenized[1]["sentence"],
           "settings": {"script": "reweighting.py", **REWEIGHT, "n_head": n_head, "demonstration_shot": SHOTS,
                        "seed": args.seed, "n": len(test), "seconds": seconds}}
    (args.out / "reweighting.json").write_text(json.dumps(out, indent=1))
    print(json.dumps({"n": len(test), "losses": [round(v, 4) for v in losses], "seconds": round(seconds, 1)}))


if __name__ == "__main__":
    main()
