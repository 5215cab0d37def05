"""Run ELICIT's authors' library-entry build (set up by elicit_setup.sh) on one handed-over split and keep what it made.

    cd $PARITY_SRC/patched/elicit && \
        $PARITY_SRC/venvs/parity-elicit/bin/python <repo>/bench/parity/elicit_authors.py \
        --model $PARITY_RUN/smollm2-135m --data $PARITY_RUN/data --task sentiment-s0-elicit \
        --out $PARITY_RUN/elicit/sentiment-s0-elicit/authors

Runs in the authors' environment, never in ICL Lab's. Their `compute_avg_hidden_state.py` runs unchanged, as
their `scripts/collect_tv.sh` calls it (16 shots, the sweep on the `valid` split, `--test_nums 100`, weights 1.0
on the state and 2.0 on the vector, `--save_icl --recompute --eval`), with two flags changed: `--model_dtype 32`
(fp32, as ICL Lab runs the model on the CPU; theirs is 16) and no `--fluency` (a cross-entropy on
`stas/openwebtext-10k`, fetched from the hub, which only reports fluency). Its library entry is the mean over 10
prompts (their `--n_trials` default) of 16 demonstrations from `train` and a query from `valid` of each block's
output at the last token; the block is the first with the best first-token accuracy on `valid`, each item a
zero-shot prompt whose last-token state after the block becomes 1.0·h + 2.0·v. Then their own evaluation
functions answer the test items with that entry at that block (`n_shot_eval`, as the script calls it on `valid`),
zero-shot and 16-shot (`n_shot_eval_no_intervention`). Their `function_vector_intervention` and `sentence_eval`
are wrapped to keep each answer's argmax token id, so that ICL Lab scores both sides by one rule.

Writes `items.json` (per test item, in order: their hit and argmax token id with the entry, zero-shot and
16-shot; their accuracy by block on `valid`; the block; their 10 prompts; the probe logits; the settings) and
`learnt.safetensors` (`mean`: the entry at every block (L, d); `states`: the 10 prompts' states (10, L, d)).
"""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

from safetensors.torch import save_file
from site_authors import probe_logits, unit_parser

SHOTS, WEIGHT_ORI, WEIGHT_FV = 16, 1.0, 2.0  # scripts/collect_tv.sh


def main() -> None:
    ap = unit_parser(__doc__.splitlines()[0], "a local checkpoint whose path names smollm2 (elicit_setup.sh)",
                     "a folder under --data (compare_elicit.py handover)")
    args = ap.parse_args()
    sys.path.insert(0, str(Path.cwd()))
    args.out.mkdir(parents=True, exist_ok=True)
    sys.argv = ["compute_avg_hidden_state.py", "--dataset_name", args.task, "--model_name", args.model,
                "--root_data_dir", str(args.data / args.task), "--save_path_root", str(args.out / "library"),
                "--dataset_split", "valid", "--n_shots", str(SHOTS), "--model_dtype", "32", "--save_icl",
                "--test_nums", "100", "--recompute", "--eval",
                "--weight_ori", str(WEIGHT_ORI), "--weight_fv", str(WEIGHT_FV)]
    run = runpy.run_path("compute_avg_hidden_state.py", run_name="__main__")  # their script, unchanged
    model, tokenizer, config, dataset = run["model"], run["tokenizer"], run["model_config"], run["dataset"]
    mean, states, sweep = run["mean_activations"], run["activation_storage"], run["zs_res"]
    layer = int(sweep["best_layer"])

    from utils import eval_utils  # the module whose globals their evaluation looks these up in

    ids: list[int] = []
    clean_ids: list[int] = []
    intervene, sentence = eval_utils.function_vector_intervention, eval_utils.sentence_eval

    def recording_intervention(*a, **k):
        out = intervene(*a, **k)
        clean_ids.append(int(out[0][0].argmax()))
        ids.append(int(out[1][0].argmax()))
        return out

    def recording_sentence(*a, **k):
        out = sentence(*a, **k)
        ids.append(int(out[0][0].argmax()))
        return out

    eval_utils.function_vector_intervention = recording_intervention
    eval_utils.sentence_eval = recording_sentence

    def evaluate(fn, *a, **k) -> tuple[list[bool], list[int]]:
        ids.clear()
        res = fn(*a, **k)
        key = "intervention_rank_list" if "intervention_rank_list" in res else "clean_rank_list"
        return [r == 0 for r in res[key]], list(ids)

    common = dict(dataset_split="test", prepend_space=True)  # as their script calls these, on the test split
    elicit, elicit_ids = evaluate(eval_utils.n_shot_eval, dataset, mean[layer].unsqueeze(0), layer, 0, model, config,
                                  tokenizer, weight_fv=WEIGHT_FV, weight_ori=WEIGHT_ORI, **common)
    zero_in_sweep = list(clean_ids)
    zero, zero_ids = evaluate(eval_utils.n_shot_eval_no_intervention, dataset, 0, model, config, tokenizer, **common)
    few, few_ids = evaluate(eval_utils.n_shot_eval_no_intervention, dataset, SHOTS, model, config, tokenizer,
                            **common)
    n_layers = config["n_layers"]
    items = {"elicit": elicit, "zero-shot": zero, "few-shot": few,
             "ids": {"elicit": elicit_ids, "zero-shot": zero_ids, "few-shot": few_ids,
                     "zero-shot, beside the entry": zero_in_sweep},
             "dev_accuracy_by_layer": [sweep[i]["acc"] / 100 for i in range(n_layers)],
             "dev_hits_by_layer": [[r == 0 for r in sweep[i]["intervention_rank_list"]] for i in range(n_layers)],
             "dev_zero_shot": [r == 0 for r in sweep[0]["clean_rank_list"]],
             "dev_few_shot_accuracy": run["regular_few_shot_acc"] / 100,
             "layer": layer, "icl_prompts": run["icl_prompts"],
             "probe": probe_logits(model, tokenizer, dataset["test"][0]["input"]),
             "settings": {"n_shots": run["n_shots"], "n_trials": int(run["n_trials"]), "weight_ori": WEIGHT_ORI,
                          "weight_fv": WEIGHT_FV, "seed": 42, "dtype": "float32", "argv": sys.argv[1:],
                          **{f"n_{part}": len(dataset[part]) for part in ("train", "valid", "test")}}}
    (args.out / "items.json").write_text(json.dumps(items, indent=1))
    save_file({"mean": mean.float().contiguous(), "states": states.float().contiguous()},
              str(args.out / "learnt.safetensors"))
    print(json.dumps({k: sum(items[k]) / len(items[k]) for k in ("elicit", "zero-shot", "few-shot")}
                     | {"layer": layer}))


if __name__ == "__main__":
    main()
