"""Run the iterative vectors' authors' `iv.py` (set up by iv_setup.sh) on one handed-over split; keep what it measured.

    cd $PARITY_SRC/patched/iterative-vectors && \
        $PARITY_SRC/venvs/parity-iv/bin/python <repo>/bench/parity/iv_authors.py --episodes 30 --strength 0.5 \
        --model $PARITY_RUN/smollm2-135m --data $PARITY_RUN/data --task sentiment-s0-iv \
        --out $PARITY_RUN/iv/sentiment-s0-iv/authors

Runs in the authors' environment, never in ICL Lab's. Their `iv.py` runs as `__main__`, unchanged but for
iv_setup.sh's changes, with their arguments (`--episodes`, `--strength`, `--ext-strength`, 1 demonstration per
label, an update every 10 episodes, `--seed` the split's seed, `--run-test`) and a configuration file naming the
checkpoint and SmolLM2's 30 attention output projections (their `target_layer` for every Llama). Two functions
of their module `util` are replaced or wrapped, nothing else:
- `load_dataset_splits` reads the hub; here it returns the handed-over records (`train`, `valid`, `test`) as
  `datasets` tables with the labels in ICL Lab's order. (Theirs, at the pinned commit, returns the test split as
  the train split too: `map(trec_rename, (test_set, val_set, test_set))`; here train is the handed-over training
  part.)
- `verbalize` is wrapped to keep every prompt it builds: its samples, token ids and answer positions, from which
  the extraction episodes (demonstrations in prompt order, then the query) are read back.

Their own evaluation loop runs as in the paper (`--shot 1`: one demonstration per label and a query, all drawn at
random from the test split, every row added at its position; 24 such episodes); its accuracy is kept as
"paper-style", not item by item. Then each test item, in order, is answered as ICL Lab answers, zero-shot, by
their own functions as their evaluation loop calls them: `verbalize` on the query alone and `apply_iv` with the
query row of their vectors (`ivs[l][-1:]`) at `--strength`, and at strength 0 (their zero-shot: the same pass with
zeros added); the prediction is their argmax over the labels' first tokens (`limit`).

Writes `items.json` (per test item, in order: the predicted label index at the strength and at 0; their
paper-style evaluation's accuracy; the episodes; every prompt's token ids and answer positions; the probe; the
settings; the time of their `iv.py`) and `learnt.safetensors` (`vectors` (L, R, d): the rows per label, then the
query's, after the last update).
"""

from __future__ import annotations

import json
import runpy
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import save_file
from site_authors import probe_logits, unit_parser

NAME = "smollm2-135m"  # the model's key in the configuration file their args.py reads
UPDATE_EVERY, DEMOS_PER_LABEL, PAPER_EVAL = 10, 1, 24  # their defaults: --ext-batch, --ext-shot; -n episodes


def config_file(out: Path, model: str) -> Path:
    """Their base configuration (JSON is YAML) for the checkpoint: every layer's attention output projection,
    as their config/base.yaml names it for each Llama; the result files under `out`."""
    layers = json.loads((Path(model) / "config.json").read_text())["num_hidden_layers"]
    config = {"models": {NAME: model}, "no_split_layer": {NAME: "LlamaDecoderLayer"},
              "target_layer": {NAME: ["model.layers.{}.self_attn.o_proj", 0, layers]},
              "tv_target_layer": {NAME: ["model.layers.{}", 0, layers]},
              "merge": {f"{k}_result_fn": str(out / "results" / f"{k}.txt") for k in ("clean", "edit", "test")}}
    path = out / "config.yaml"
    path.write_text(json.dumps(config, indent=1))
    return path


def handed_splits(folder: Path, labels: list[str]) -> tuple:
    """The unit's train, valid and test records as their loader returns splits: `text` and a `label` class."""
    from datasets import ClassLabel, Dataset, Features, Value

    features = Features({"text": Value("string"), "label": ClassLabel(names=labels)})

    def part(name: str) -> Dataset:
        rows = json.loads((folder / f"{name}.json").read_text())
        columns = {"text": [r["input"] for r in rows], "label": [labels.index(r["output"]) for r in rows]}
        return Dataset.from_dict(columns, features=features)

    return part("train"), part("valid"), part("test")


def episodes_of(prompts: list[dict], n: int) -> list[dict]:
    """Their n extraction episodes from the prompts verbalize built, two each (few-shot, then the query alone)."""
    return [{"demos": prompts[2 * e]["samples"][:-1], "query": prompts[2 * e]["samples"][-1]} for e in range(n)]


def answer_alone(g: dict, test: list[dict], strength: float) -> list[int]:
    """Each test item answered zero-shot by their functions: the query alone, its query row added at `strength`."""
    device, query_row = g["device"], {layer: v[-1:] for layer, v in g["ivs"].items()}
    preds = []
    for r in test:
        token, ans_mask, io_mask = g["verbalize"](g["vb"], [{"input": r["input"], "output": r["output"]}], device)
        with torch.no_grad():
            logits = g["apply_iv"](token, io_mask, ans_mask, query_row, strength)
        preds.append(int(logits[0][g["limit"]].argmax()))
    return preds


def main() -> None:
    ap = unit_parser(__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=200, help="their --episodes (default: theirs)")
    ap.add_argument("--strength", type=float, default=1.0, help="their --strength (default: theirs)")
    ap.add_argument("--ext-strength", type=float, default=0.1, help="their --ext-strength (default: theirs)")
    args = ap.parse_args()
    sys.path.insert(0, str(Path.cwd()))
    import util  # the authors' util.py, from the current directory

    folder = args.data / args.task
    labels = json.loads((folder / "split.json").read_text())["labels"]
    splits = handed_splits(folder, labels)
    util.load_dataset_splits = lambda dataset, task: splits
    prompts: list[dict] = []
    verbalize = util.verbalize

    def recording(verbalizer, samples, device):
        token, ans_mask, io_mask = verbalize(verbalizer, samples, device)
        prompts.append({"samples": samples, "ids": token["input_ids"][0].tolist(),
                        "marks": io_mask[0].nonzero().flatten().tolist()})
        return token, ans_mask, io_mask

    util.verbalize = recording
    args.out.mkdir(parents=True, exist_ok=True)
    seed = json.loads((folder / "split.json").read_text())["seed"]
    argv = ["-m", NAME, "-g", "0", "--no-half", "--config-base", str(config_file(args.out, args.model)),
            "-t", args.task, "-e", str(args.episodes), "-s", str(DEMOS_PER_LABEL), "--ext-batch", str(UPDATE_EVERY),
            "--strength", str(args.strength), "--ext-strength", str(args.ext_strength), "--seed", str(seed),
            "--shot", "1", "-n", str(PAPER_EVAL), "--run-test"]
    sys.argv = ["iv.py", *argv]
    t0 = time.perf_counter()
    g = runpy.run_path("iv.py", run_name="__main__")
    took = time.perf_counter() - t0
    built = prompts[: 2 * args.episodes]
    test = json.loads((folder / "test.json").read_text())
    paper = sum(p == t for p, t in zip(g["edit_result"], g["true_labels"])) / len(g["true_labels"])
    items = {"labels": labels, "gold": [labels.index(r["output"]) for r in test],
             "pred": {"iterative-vector": answer_alone(g, test, args.strength),
                      "zero-shot": answer_alone(g, test, 0.0)},
             "paper-style accuracy": paper, "episodes": episodes_of(built, args.episodes),
             "prompts": [{k: p[k] for k in ("ids", "marks")} for p in built],
             "test prompts": [{k: p[k] for k in ("ids", "marks")} for p in prompts[-len(test):]],
             "probe": probe_logits(g["model"], g["tokenizer"], test[0]["input"]),
             "settings": {"episodes": args.episodes, "strength": args.strength, "ext_strength": args.ext_strength,
                          "update_every": UPDATE_EVERY, "demos_per_label": DEMOS_PER_LABEL, "seed": seed,
                          "paper_eval_episodes": PAPER_EVAL, "argv": argv},
             "time_s": took}
    vectors = torch.stack([g["ivs"][layer] for layer in g["args"].target_layers])
    save_file({"vectors": vectors.float().contiguous()}, str(args.out / "learnt.safetensors"))
    (args.out / "items.json").write_text(json.dumps(items, indent=1))
    gold = items["gold"]
    print(json.dumps({side: sum(p == y for p, y in zip(pred, gold)) / len(gold) for side, pred in items["pred"].items()}
                     | {"paper-style": paper, "time_s": round(took, 1)}))


if __name__ == "__main__":
    main()
