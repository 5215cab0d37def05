"""lm-evaluation-harness against `icl-lab eval` on the same items (docs/elsewhere.md): one harness task written over
the test split that `eval` scores, each method built once by `eval`'s own run and then applied in the harness.

    PYTHONPATH=. python bench/harness_compare.py --data $ICL_LAB_DATA/fv/sentiment.json --n-test 100 \
        --methods zero-shot,few-shot,site,icr,task-vector,icv --out runs/harness-compare

`icr_app.evaluation.evaluate` runs as `icl-lab eval --n-test N --seeds 0` does (its split, its builds, its scoring);
its scorer is wrapped only to keep the built methods. The harness task is multiple choice over the task's labels
with ICL Lab's prompt (`Input: {x}\\nOutput:`, the answer after a space), its data the test split as a local JSONL
file, its few-shot pool the train split. zero-shot runs lm-eval's own `HFLM`, few-shot the same with
`num_fewshot` = `--shots` (the harness's demonstrations: drawn at random, not class-balanced as ICL Lab's), every
other method `icl.harness_lm(method)`. Per method: both accuracies, the items answered alike, and for the methods
other than few-shot the largest |difference| of a label's probability (the harness's two log-likelihoods
normalised; ICL Lab scores the labels' first tokens, which are the whole labels here).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path
from typing import Any

import icr_app as icl
from icr_app.core.tasks import Task, item_keys, load_task
from icr_app.evaluation import eval_split, evaluate, score_interleaved
from icr_app.harness import evaluate_tasks, plain_lm
from icr_app.methods.base import Method

TASK = "icl_lab_compare"


def write_task(folder: Path, task: Task, train: Task, test: Task) -> None:
    """The harness task over `test` (its few-shot pool `train`), as YAML and JSONL in `folder`."""
    for name, part in (("train", train), ("test", test)):
        rows = [{"input": x, "label": task.labels.index(y)} for x, y in zip(part.inputs, part.outputs)]
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    spec = {"task": TASK, "dataset_path": "json", "output_type": "multiple_choice",
            "dataset_kwargs": {"data_files": {s: str(folder / f"{s}.jsonl") for s in ("train", "test")}},
            "test_split": "test", "fewshot_split": "train", "doc_to_text": "Input: {{input}}\nOutput:",
            "doc_to_target": "label", "doc_to_choice": list(task.labels), "metric_list": [{"metric": "acc"}]}
    (folder / f"{TASK}.yaml").write_text(json.dumps(spec, indent=1))  # JSON is YAML


def harness_answers(model: Any, folder: Path, n: int, shots: int | None) -> list[list[float]]:
    """Each test item's label log-likelihoods, in test order."""
    rows = evaluate_tasks(model, [TASK], num_fewshot=shots, limit=n, include_path=str(folder))["samples"][TASK]
    return [[r[0][0] for r in row["resps"]] for row in sorted(rows, key=lambda row: row["doc_id"])]


def compare(entry: str, method: Method, test: Task, lls: list[list[float]], correct: list[bool]) -> dict:
    labels = method.labels
    picks = [labels[max(range(len(ll)), key=ll.__getitem__)] for ll in lls]
    ours = [y if ok else next(lab for lab in labels if lab != y) for ok, y in zip(correct, test.outputs)]
    row = {"method": entry, "eval accuracy": sum(correct) / len(correct),
           "harness accuracy": sum(p == y for p, y in zip(picks, test.outputs)) / len(picks),
           "same answer": sum(a == b for a, b in zip(picks, ours)), "n": len(picks)}
    if entry != "few-shot":
        probs = [p.label_probs for p in method.predict(test.inputs)]
        diff = 0.0
        for ll, p in zip(lls, probs):
            norm = math.log(sum(math.exp(x) for x in ll))
            diff = max(diff, *(abs(math.exp(x - norm) - p[lab]) for x, lab in zip(ll, labels)))
        row["max |label probability difference|"] = diff
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="a two-label classification task file")
    ap.add_argument("--methods", default="zero-shot,few-shot,site,icr,task-vector,icv")
    ap.add_argument("--n-test", type=int, default=100)
    ap.add_argument("--shots", type=int, default=10)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    args.out.mkdir(parents=True, exist_ok=True)
    lm, task = icl.load_model("smollm2-135m"), load_task(args.data)
    built: dict[str, Method] = {}

    def keep(methods: dict[str, Method], *rest: Any) -> Any:
        built.update(methods)
        return score_interleaved(methods, *rest)

    t0 = time.perf_counter()
    report = evaluate(lm, task, args.methods.split(","), n_test=args.n_test, seed=0, shots=args.shots, score=keep)
    train, test = eval_split(task, args.n_test, 0, args.shots)
    assert report.items == item_keys(test)  # the items evaluate scored, in its order
    write_task(args.out, task, train, test)
    rows = []
    for entry, method in built.items():
        if entry in ("zero-shot", "few-shot"):
            model, shots = plain_lm(lm), (args.shots if entry == "few-shot" else 0)
        else:
            model, shots = icl.harness_lm(method), 0
        lls = harness_answers(model, args.out, len(test.inputs), shots)
        rows.append(compare(entry, method, test, lls, report.methods[entry].correct))
        print(json.dumps(rows[-1]), flush=True)
    (args.out / "compare.json").write_text(json.dumps({"rows": rows, "seconds": time.perf_counter() - t0,
                                                       "data": Path(args.data).name}, indent=1))


if __name__ == "__main__":
    main()
