"""Run the anchors authors' saliency script (set up by anchors_setup.sh) on one handed-over unit and keep its flows.

    cd /work/parity-src/anchors && /work/venvs/parity-anchors/bin/python <repo>/bench/parity/anchors_authors.py \
        --model /work/parity-run/smollm2-135m --data /work/parity-run/data --task sentiment-s0-anchors \
        --out /work/parity-run/anchors/sentiment-s0-anchors/authors

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
"""

from __future__ import annotations

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


def main() -> None:
    ap = unit_parser(__doc__.splitlines()[0], "an absolute path: their loader takes it as a local checkpoint",
                     "a folder under --data written by compare_anchors.py handover")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    unit = (args.data / args.task).resolve()
    os.environ["ICLLAB_DATA"] = str(unit)  # read by their 'icllab' task (anchors_setup.sh)
    sys.path.insert(0, str(Path.cwd()))
    from icl.utils.random_utils import set_seed

    set_seed(args.seed)  # their script imports set_seed but never calls it; nothing it does is random but the
    # demonstrations, which are ICL Lab's here, and the order of the test items, which is mapped back below
    args.out.mkdir(parents=True, exist_ok=True)
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


if __name__ == "__main__":
    main()
