"""Run the task vectors' authors' code (set up by tv_setup.sh) on one handed-over split and keep what it measured.

    cd $PARITY_SRC/patched/icl_task_vectors && \
        $PARITY_SRC/venvs/parity-tv/bin/python <repo>/bench/parity/tv_authors.py \
        --model $PARITY_RUN/smollm2-135m --data $PARITY_RUN/data --task sentiment-s0-tv \
        --out $PARITY_RUN/tv/sentiment-s0-tv/authors

Runs in the authors' environment, never in ICL Lab's. Their `run_task_vector` and `run_icl` run unchanged, as
their `scripts/experiments/main.py` calls them: each validation and test item is one of their datasets, the item
after 5 demonstrations drawn from the training part (`Task.create_dataset`); the layer is the one with the best
accuracy over the validation items, each patched with the vector of its own demonstrations (averaged over two
dummy queries, their default), and each test item is answered with its own vector at that layer. Their code
needs a `Task` for the data: `HandedTask` below is a mapping task over the handed-over records (what their
`MappingTask` is over their JSON files), scored by their `compare_outputs` with `allow_prefix` (a first token
that begins the answer counts). Their `decode_predictions` is wrapped to keep the first answer token's id, so
that ICL Lab scores both sides by one rule. Writes `items.json` (per test item, in order: their hit and the
token id of the task vector, 5-shot ICL and zero-shot; the accuracy by layer on the validation items; the layer;
the probe logits; the settings) and `learnt.safetensors` (`hiddens`, the test items' vectors (n, L, d)).
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

import torch
from safetensors.torch import save_file
from site_authors import probe_logits, unit_parser

DEMOS = 5  # scripts/experiments/main.py: num_examples = 5


def main() -> None:
    ap = unit_parser(__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    sys.path.insert(0, str(Path.cwd()))
    os.environ.setdefault("LLAMA_DIR", args.model)  # their loader module reads it (their .env) at import
    from core import task_vectors
    from core.data.tasks.task import Task
    from core.models.llm_loading import _setup_tokenizer
    from core.utils.misc import seed_everything
    from transformers import AutoModelForCausalLM, AutoTokenizer

    class HandedTask(Task):
        """Their mapping task over the handed-over records; demonstrations and dummy queries come from `train`."""

        def __init__(self, tokenizer, train: list[dict], every: list[dict]):
            super().__init__(tokenizer, allow_prefix=True)
            self.pool = [r["input"] for r in train]
            self.mapping = {r["input"]: " " + r["output"] for r in every}  # the answer after a space, as theirs

        def sample_inputs(self, num_inputs, exclude=()):
            return random.sample([x for x in self.pool if x not in exclude], num_inputs)

        def calc_output(self, inp):
            return self.mapping[inp]

        def num_examples(self):
            return len(self.pool)

    ids: list[list[int]] = []
    decode = task_vectors.decode_predictions

    def recording(output_ids, tokenizer, *rest):
        ids.append(output_ids[:, 0].tolist())
        return decode(output_ids, tokenizer, *rest)

    task_vectors.decode_predictions = recording
    seed_everything(args.seed)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    _setup_tokenizer(tokenizer)
    parts = {p: json.loads((args.data / args.task / f"{p}.json").read_text()) for p in ("train", "valid", "test")}
    task = HandedTask(tokenizer, parts["train"], [r for rows in parts.values() for r in rows])
    dev = [task.create_dataset(DEMOS, test_input=r["input"]) for r in parts["valid"]]
    test = [task.create_dataset(DEMOS, test_input=r["input"]) for r in parts["test"]]
    tv, by_layer, hiddens = task_vectors.run_task_vector(model, tokenizer, task, test, dev)
    tv_ids = ids[-1]
    icl = task_vectors.run_icl(model, tokenizer, task, test)
    icl_ids = ids[-1]
    zero = task_vectors.run_icl(model, tokenizer, task, test, include_train=False)
    zero_ids = ids[-1]

    def hits(preds: list[str]) -> list[bool]:
        return [bool(task.compare_outputs(p, d.test_output)) for p, d in zip(preds, test)]

    args.out.mkdir(parents=True, exist_ok=True)
    items = {"task-vector": hits(tv), "few-shot": hits(icl), "zero-shot": hits(zero),
             "ids": {"task-vector": tv_ids, "few-shot": icl_ids, "zero-shot": zero_ids},
             "dev_accuracy_by_layer": [by_layer[k] for k in sorted(by_layer)],
             "layer": int(max(by_layer, key=by_layer.get)),
             "probe": probe_logits(model, tokenizer, parts["test"][0]["input"]),
             "settings": {"demos": DEMOS, "seed": args.seed, "n_dev": len(dev), "n_test": len(test)}}
    (args.out / "items.json").write_text(json.dumps(items, indent=1))
    save_file({"hiddens": hiddens.float().contiguous()}, str(args.out / "learnt.safetensors"))
    print(json.dumps({k: sum(items[k]) / len(items[k]) for k in ("task-vector", "few-shot", "zero-shot")}
                     | {"layer": items["layer"]}))


if __name__ == "__main__":
    main()
