"""Run the ICL state vectors' authors' code (set up by sv_setup.sh) on one handed-over unit and keep what it measured.

    cd $PARITY_SRC/patched/icl_state_vector && \
        $PARITY_SRC/venvs/parity-sv/bin/python <repo>/bench/parity/sv_authors.py \
        --model $PARITY_RUN/smollm2-135m --data $PARITY_RUN/data --task antonyms-s0-sv \
        --out $PARITY_RUN/sv/antonyms-s0-sv/authors

Runs in the authors' environment, never in ICL Lab's. Their `ICLVectorEvaluator` runs unchanged, called as their
`state_vector_optimize.py` calls it for the zero-shot setting: `single_ICL_test` on the test items without
demonstrations (their `Regular`) and with the 10 (their `ICL baseline`), and `single_atv_test` with one prompt (the
unit's `demon` and its dummy query), their three optimizers (`none`, `fixed` over 7 states, `fix-one-step` with
weights 1, 2, 4, 8, 16, 0 and lr 1) and `intervention_mode='add#0#1'` on the attention's output projection input.
Their script edits the first n layers with n from a table for Llama-2-7B and GPT-J; here `single_atv_test` runs at
every n from 1 to L on the validation and test items together, and compare_sv.py picks n on the validation items.

The prompt is ICL Lab's through their arguments: `question_prompt` "Input: {input}\\nOutput", `proj_tokens` ":" and
`eos` "\\n\\n", the answers after a space, so their `format_example` builds the text `Input: x\\nOutput: y\\n\\n` …
`Input: q\\nOutput:` (its token ids are the text's but at each demonstration's end, where their piece-by-piece
tokenising gives `\\n\\n` then `\\n`: bench/parity/README.md), and the projection token whose state they read and
write (their "→") is the last token, ":", the separator ICL Lab reads. Their `top_k_metric` is wrapped (in TVeval's
namespace) to keep each item's argmax token id and gold probability beside the rank it computes. Writes `items.json`
(the prompt's ids and separator positions, the gold ids, zero-shot and few-shot ids, per n and optimizer the
validation hits, gold probabilities and the test ids, the probe, the settings) and `learnt.safetensors` (`states` (k
+ 1, L, width) of the prompt, read by their `read_activation` at every layer, and each optimizer's vector (L,
width), by their optimizer classes).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from safetensors.torch import save_file
from site_authors import probe_logits, unit_parser

QUESTION = "Input: {input}\nOutput"  # with PROJ, ICL Lab's "Input: x\nOutput:"; the answer follows after a space
FORMAT = {"eos": "\n\n", "proj_tokens": ":"}
METRIC = {"top_k": {"max_top": 1}}  # state_vector_optimize.py
OPTIMIZERS = {"none": {}, "fixed": {"beta": [1, 1, 1, 1, 1, 1, 1]},
              "fix-one-step": {"lr": [1], "weight": [[1, 2, 4, 8, 16, 0]]}}  # state_vector_optimize.py
MODES = ("average", "inner", "momentum")  # ICL Lab's names for their optimizers, in OPTIMIZERS' order


def spaced(rows: list[dict]) -> list[dict]:
    """The records with the answer after a space: their prompt puts the answer right after the projection token."""
    return [{"input": r["input"], "output": " " + r["output"]} for r in rows]


def main() -> None:
    ap = unit_parser(__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    sys.path.insert(0, str(Path.cwd()))
    import TVeval
    from TVframework import Evaluator
    from utils import set_rand_seed

    scored: list[dict] = []
    top_k = TVeval.top_k_metric

    def recording(config, logits, answer_ids):
        scored.append({"ids": [int(x.argmax()) for x in logits], "gold": [int(a[0]) for a in answer_ids],
                       "gold prob": [float(x.float().softmax(-1)[a[0]]) for x, a in zip(logits, answer_ids)]})
        return top_k(config, logits, answer_ids)

    TVeval.top_k_metric = recording
    set_rand_seed(args.seed)
    evaluator = TVeval.ICLVectorEvaluator(METRIC, Evaluator(args.model, devices="0"))
    data = json.loads((args.data / args.task / "0.json").read_text())
    demon, dummy = spaced(data["demon"]), spaced([data["dummy_test"]])[0]
    valid, test = spaced(data["valid"]), spaced(data["test"])
    shots = {}
    for side, demos in (("zero-shot", []), ("few-shot", demon)):
        evaluator.single_ICL_test([{**d, "demon": demos} for d in test], question_prompt=QUESTION, format_dict=FORMAT)
        shots[side] = {"ids": scored[-1]["ids"]}
    gold = scored[-1]["gold"]
    n_layers = evaluator.evaluator.model.config.num_hidden_layers
    sweep = []
    for n in range(1, n_layers + 1):
        evaluator.single_atv_test(dummy_queries=[dummy], dev_data=[demon], test_data=valid + test,
                                  layer_indices=list(range(n)), optimizer_config=OPTIMIZERS, fs_eval=False,
                                  shuffle_labels=False, intervention_mode="add#0#1", add_to="atten",
                                  question_prompt=QUESTION, format_dict=FORMAT)
        sweep.append({mode: {"valid hits": [i == g for i, g in zip(s["ids"], s["gold"])][:len(valid)],
                             "valid gold prob": s["gold prob"][:len(valid)], "test ids": s["ids"][len(valid):]}
                      for mode, s in zip(MODES, scored[-len(MODES):])})
        print(f"n {n}: " + ", ".join(f"{m} valid {sum(sweep[-1][m]['valid hits'])}/{len(valid)}" for m in MODES),
              flush=True)
    learnt = their_vectors(evaluator, dummy, demon, n_layers)
    ids, mask = evaluator.evaluator.format_example_with_length(
        QUESTION.format_map(dummy), None, demon_list=[(QUESTION.format_map(e), e["output"]) for e in demon], **FORMAT)
    if any(mask.count(f"project_{r}") != 1 for r in range(len(demon))) or mask.count("project") != 1:
        raise SystemExit("the projection token is not one token: the states kept would not be the separator's")
    separators = [mask.index(f"project_{r}") for r in range(len(demon))] + [mask.index("project")]
    args.out.mkdir(parents=True, exist_ok=True)
    items = {"prompt": {"ids": ids[0].tolist(), "separators": separators},
             "gold": gold, **shots, "sweep": sweep,
             "probe": probe_logits(evaluator.evaluator.model, evaluator.tokenizer, data["test"][0]["input"]),
             "settings": {"seed": args.seed, "demonstrations": len(demon), "n_valid": len(valid), "n_test": len(test),
                          "question_prompt": QUESTION, "format": FORMAT, "optimizers": OPTIMIZERS}}
    (args.out / "items.json").write_text(json.dumps(items, indent=1))
    save_file(learnt, str(args.out / "learnt.safetensors"))
    print(json.dumps({side: sum(i == g for i, g in zip(shots[side]["ids"], gold)) / len(gold) for side in shots}))


def their_vectors(evaluator, dummy: dict, demon: list[dict], n_layers: int) -> dict[str, torch.Tensor]:
    """The prompt's states at every layer and each optimizer's vector, as `single_atv_test` makes them (their
    `read_activation`, `avg_tv` over the one prompt, `get_optimizers`), for all L layers at once."""
    from optimizer import get_optimizers

    read, _ = evaluator.evaluator.read_activation(
        QUESTION.format_map(dummy), [(QUESTION.format_map(e), e["output"]) for e in demon], list(range(n_layers)),
        FORMAT)
    states = evaluator.avg_tv([read])
    dev = {k: [v[f"dev_{i}"] for i in range(len(v) - 1)] for k, v in states.items()}
    query = {k: v["test"] for k, v in states.items()}
    layers = range(n_layers)
    out = {"states": torch.stack([torch.stack([*dev[layer], query[layer]]) for layer in layers], dim=1)[:, :, -1]}
    for mode, opt in zip(MODES, get_optimizers(OPTIMIZERS)):
        vector = opt(dev, query)
        out[mode] = torch.stack([vector[layer][-1] for layer in layers])  # the projection token's row (one here)
    return {k: v.float().contiguous() for k, v in out.items()}


if __name__ == "__main__":
    main()
