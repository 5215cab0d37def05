"""Run the function vectors' authors' code (set up by fv_setup.sh) on one handed-over split and keep what it made.

    cd $PARITY_SRC/patched/function_vectors/src && \
        $PARITY_SRC/venvs/parity-fv/bin/python <repo>/bench/parity/fv_authors.py \
        --model $PARITY_RUN/smollm2-135m --data $PARITY_RUN/data --task sentiment-s0-fv --seed 0 \
        --out $PARITY_RUN/fv/sentiment-s0-fv/authors

Runs in the authors' environment, never in ICL Lab's. Their own functions, unchanged, as their
`compute_indirect_effect.py` and `evaluate_function_vector.py` call them, at ICL Lab's settings (10 shots, 24
clean prompts, 16 corrupted trials, the top 20 heads, the vector added after block L // 3 = 10):
`get_mean_head_activations` (each head's mean o_proj input over the clean 10-shot prompts, per token slot),
`compute_indirect_effect` (per trial, a 10-shot prompt with shuffled labels; each head's last-token o_proj input
replaced by its mean, one forward pass per head; the rise of the query's first answer token's probability,
softmax over the vocabulary), `compute_function_vector` (the top-k heads of the mean indirect effect, their mean
last-token outputs projected through o_proj and summed) and `n_shot_eval` with 0 shots (each test item's
zero-shot prompt, once clean and once with the vector added at the last token). Their template is an argument:
ICL Lab's (`Input: x\\nOutput: y`, `\\n\\n` between examples). Python, NumPy and torch are seeded with the unit's
seed (their `set_seed`). `function_vector_intervention` is wrapped (in `utils.eval_utils`' namespace) to keep each
answer's argmax token id, and `get_token_meta_labels` (in the two modules that call it) to keep each prompt, its
query's answer and the label of its last token (their indirect effect patches the tokens labelled
`query_predictive_token`).

With `--query-apart` their two prompt samplers (the mean activations' and the indirect effect's) draw each
prompt's query among the records that are not its demonstrations, as ICL Lab's does; without it they may draw
one of the prompt's own demonstrations as its query (the hand-over gives them one pool as `train` and `valid`).

Writes `items.json` (per test item, in order: their hit and argmax token id with the vector and zero-shot; the top
heads; the prompts; the probe; timings and the seconds per forward pass; the settings) and `learnt.safetensors`
(`aie` (L, H): the mean indirect effect; `indirect_effects` (trials, L, H); `mean_last` (L, H, d_h): each head's
mean output at the last token; `fv` (d,)).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import save_file
from site_authors import unit_parser

SHOTS, N_CLEAN, N_CORRUPTED, TOP_K = 10, 24, 16, 20  # ICL Lab's FunctionVectorConfig on SmolLM2-135M
PREFIXES = {"input": "Input:", "output": "Output:", "instructions": ""}  # ICL Lab's Template, in their format
SEPARATORS = {"input": "\n", "output": "\n\n", "instructions": ""}


def handed_dataset(folder: Path) -> dict:
    """Their `load_dataset`'s result ({"train", "valid", "test"} ICLDatasets) over the handed-over records; built
    from dicts, not from the paths, so that pandas' read_json infers no types from the text."""
    from utils.prompt_utils import ICLDataset

    def part(name: str) -> ICLDataset:
        rows = json.loads((folder / f"{name}.json").read_text())
        return ICLDataset({"input": [r["input"] for r in rows], "output": [r["output"] for r in rows]})

    return {name: part(name) for name in ("train", "valid", "test")}


def record_prompts(modules: list, store: list) -> None:
    """Wrap `get_token_meta_labels` where `modules` look it up: keep each prompt, its query's answer and its last
    token's label."""
    original = modules[0].get_token_meta_labels

    def recording(*a, **k):
        labels, prompt = original(*a, **k)
        store.append({"prompt": prompt, "target": a[0]["query_target"]["output"], "last_label": labels[-1][2]})
        return labels, prompt

    for module in modules:
        module.get_token_meta_labels = recording


class _QueryApart:
    """`np.random` for their two prompt samplers, with one change: the query (drawn from an array of candidates,
    right after the demonstrations were drawn from `range(n)`) is never one of its prompt's demonstrations. An index
    names the same record in both draws, as the hand-over's `train` and `valid` are one pool."""

    def __init__(self, random) -> None:
        self._random, self._demos = random, set()

    def __getattr__(self, name: str):
        return getattr(self._random, name)

    def choice(self, a, size=None, replace=True, p=None):
        if isinstance(a, int):  # the demonstrations
            drawn = self._random.choice(a, size, replace=replace, p=p)
            self._demos = set(drawn.tolist())
            return drawn
        pool = [i for i in a if i not in self._demos]
        self._demos = set()
        return self._random.choice(pool, size, replace=replace, p=p)


class _NumpyQueryApart:
    """NumPy as their samplers' modules see it, with `_QueryApart` as its `random`."""

    def __init__(self, np) -> None:
        self._np, self.random = np, _QueryApart(np.random)

    def __getattr__(self, name: str):
        return getattr(self._np, name)


def keep_query_apart(modules: list) -> None:
    import numpy as np

    numpy = _NumpyQueryApart(np)
    for module in modules:
        module.np = numpy


def probe(model, tokenizer, dataset: dict) -> dict:
    """A 10-shot prompt as their code builds it (the first 10 training records, the first test query), with its
    token ids and last-token top-5 logits, for ICL Lab to rebuild and rerun."""
    from utils.prompt_utils import create_prompt, word_pairs_to_prompt_data

    demos, query = dataset["train"][list(range(SHOTS))], dataset["test"][0]
    data = word_pairs_to_prompt_data(demos, query_target_pair=query, prefixes=PREFIXES, separators=SEPARATORS)
    prompt = create_prompt(data)
    enc = tokenizer(prompt, return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc).logits[0, -1].float()
    top = logits.topk(5)
    return {"prompt": prompt, "demos": [dict(input=x, output=y) for x, y in zip(demos["input"], demos["output"])],
            "query": query["input"], "ids": top.indices.tolist(), "logits": top.values.tolist(),
            "input_ids": enc.input_ids[0].tolist()}


def main() -> None:
    ap = unit_parser(__doc__.splitlines()[0], "a local checkpoint whose path names smollm2 (fv_setup.sh)",
                     "a folder under --data (handover.py --method function-vector)")
    ap.add_argument("--seed", type=int, required=True, help="the split's seed; seeds Python, NumPy and torch")
    ap.add_argument("--clean", type=int, default=N_CLEAN, help="clean prompts of the mean activations")
    ap.add_argument("--trials", type=int, default=N_CORRUPTED, help="corrupted prompts of the indirect effect")
    ap.add_argument("--top-k", type=int, default=TOP_K)
    ap.add_argument("--layer", type=int, default=-1, help="edit layer; -1 = L // 3, as ICL Lab")
    ap.add_argument("--query-apart", action="store_true",
                    help="their sampler changed to never draw a prompt's query among its demonstrations (as ours)")
    args = ap.parse_args()
    sys.path.insert(0, str(Path.cwd()))
    args.out.mkdir(parents=True, exist_ok=True)
    import compute_indirect_effect as cie
    from utils import eval_utils, extract_utils
    from utils.model_utils import load_gpt_model_and_tokenizer, set_seed

    torch.set_grad_enabled(False)  # as their scripts do
    model, tokenizer, config = load_gpt_model_and_tokenizer(args.model, device="cpu")
    layer = config["n_layers"] // 3 if args.layer < 0 else args.layer
    set_seed(args.seed)
    dataset = handed_dataset(args.data / args.task)
    prompts: list[dict] = []
    record_prompts([extract_utils, cie], prompts)
    if args.query_apart:
        keep_query_apart([extract_utils, cie])
    template = dict(prefixes=PREFIXES, separators=SEPARATORS)

    t0 = time.perf_counter()
    mean = extract_utils.get_mean_head_activations(dataset, model, config, tokenizer, n_icl_examples=SHOTS,
                                                   N_TRIALS=args.clean, **template)
    t1 = time.perf_counter()
    effects = cie.compute_indirect_effect(dataset, mean, model, config, tokenizer, n_shots=SHOTS,
                                          n_trials=args.trials, last_token_only=True, **template)
    t2 = time.perf_counter()
    fv, top_heads = extract_utils.compute_function_vector(mean, effects, model, config, n_top_heads=args.top_k)

    ids: dict[str, list[int]] = {"fv": [], "zero-shot": []}
    intervene = eval_utils.function_vector_intervention

    def recording_intervention(*a, **k):
        clean, edited = intervene(*a, **k)
        ids["zero-shot"].append(int(clean[0].argmax()))
        ids["fv"].append(int(edited[0].argmax()))
        return clean, edited

    eval_utils.function_vector_intervention = recording_intervention
    res = eval_utils.n_shot_eval(dataset, fv, layer, 0, model, config, tokenizer, **template)
    t3 = time.perf_counter()
    passes = args.trials * (config["n_layers"] * config["n_heads"] + 1)  # per trial: one clean pass, one per head
    items = {"fv": [r == 0 for r in res["intervention_rank_list"]],
             "zero-shot": [r == 0 for r in res["clean_rank_list"]], "ids": ids,
             "top_heads": [[int(h[0]), int(h[1]), float(h[2])] for h in top_heads], "layer": layer,
             "prompts": {"clean": prompts[:args.clean], "corrupted": prompts[args.clean:]},
             "probe": probe(model, tokenizer, dataset),
             "seconds": {"mean activations": t1 - t0, "indirect effects": t2 - t1, "evaluation": t3 - t2,
                         "per indirect-effect pass": (t2 - t1) / passes, "passes": passes},
             "settings": {"n_shots": SHOTS, "n_clean": args.clean, "n_trials": args.trials, "top_k": args.top_k,
                          "layer": layer, "seed": args.seed, "query_apart": args.query_apart,
                          "dtype": str(model.dtype), "prefixes": PREFIXES, "separators": SEPARATORS,
                          "threads": torch.get_num_threads(),
                          **{f"n_{part}": len(dataset[part]) for part in ("train", "valid", "test")}}}
    (args.out / "items.json").write_text(json.dumps(items, indent=1))
    save_file({"aie": effects.mean(0).contiguous(), "indirect_effects": effects.contiguous(),
               "mean_last": mean[:, :, -1].float().contiguous(), "fv": fv.reshape(-1).float().contiguous()},
              str(args.out / "learnt.safetensors"))
    print(json.dumps({k: sum(items[k]) / len(items[k]) for k in ("fv", "zero-shot")} | items["seconds"]))


if __name__ == "__main__":
    main()
