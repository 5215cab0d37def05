"""ICL Lab's task vector beside its authors' code on the handed-over splits: accuracy item by item, and what was learnt.

    PYTHONPATH=. python bench/parity/compare_tv.py --run $PARITY_RUN sentiment-s0-tv antonyms-s0-tv ...

Each unit is a folder handover.py wrote with `--method task-vector` (`data/<unit>`) that tv_authors.py ran on
(`tv/<unit>/authors`). ICL Lab's task vector is built on the same split with the paper's 5 demonstrations per
prompt (`MATCHED`), and these answer the same test items, scored by ICL Lab's first-token rule (the first
generated token is the answer's first token; for the authors' side, the token id their run kept): zero-shot,
ours, ours built with another seed (the noise a rerun of ours alone shows), the authors' code, and the mean of
their per-item vectors at their layer loaded into ours ("their mean in ours": their vectors, averaged as ours
averages). The mechanics are checked item by item: each test item's own vector from their run, patched in by
ICL Lab, must give the token their code gave. Printed and written to `tv/<unit>/compare.json`: accuracies, paired
comparisons (`icr_app.stats.paired`: exact McNemar), both chosen layers, the agreement of the two accuracy-by-layer
curves on the validation items, the cosine of the two vectors at our layer, and the probe check.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import torch
from compare_site import agreement, item_hits, probe_gap
from safetensors.torch import load_file
from units import accuracy_cells, compared, handed_split, mean, report, unit_args

from icr_app.core.models import LoadedModel, load_model
from icr_app.core.scoring import first_token_id
from icr_app.methods import build_method
from icr_app.methods.base import Answering
from icr_app.methods.task_vector import TaskVectorConfig, TaskVectorMethod
from icr_app.methods.zero_shot import ZeroShotMethod
from icr_app.stats import paired

MATCHED = TaskVectorConfig(n_demos=5)  # scripts/experiments/main.py: num_examples = 5
SIDES = ("zero-shot", "ours", "ours reseeded", "their mean in ours")
RESEED = 1000


def at_layer(ours: TaskVectorMethod, theta: torch.Tensor, layer: int) -> TaskVectorMethod:
    """Our task vector with another vector and layer (the sweep it keeps is ours, and unused when answering)."""
    meta = replace(ours.state.meta, layer=layer)
    return TaskVectorMethod(ours.lm, replace(ours.state, theta=theta.float(), meta=meta))


def item_by_item(lm: LoadedModel, ours: TaskVectorMethod, hiddens: torch.Tensor, layer: int,
                 inputs: list[str]) -> list[int]:
    """The first token ICL Lab answers with when each item's own vector from the authors' run is patched in."""
    return [at_layer(ours, hiddens[i, layer], layer).predict([x])[0].first_token for i, x in enumerate(inputs)]


def compare_unit(lm: LoadedModel, run: Path, unit: str) -> dict:
    authors = run / "tv" / unit / "authors"
    meta, train, test = handed_split(run, unit)
    answering = Answering.of(lm, train)
    items = json.loads((authors / "items.json").read_text())
    hiddens = load_file(str(authors / "learnt.safetensors"))["hiddens"]
    ours = build_method(lm, train, "task-vector", MATCHED, answering=answering, seed=meta["seed"])
    again = build_method(lm, train, "task-vector", MATCHED, answering=answering, seed=meta["seed"] + RESEED)
    theirs_layer = items["layer"]
    methods = {"zero-shot": ZeroShotMethod(lm, answering), "ours": ours, "ours reseeded": again,
               "their mean in ours": at_layer(ours, hiddens[:, theirs_layer].mean(0), theirs_layer)}
    hits = {name: item_hits(lm, m, test.inputs, test.outputs)["first-token"] for name, m in methods.items()}
    gold = [first_token_id(lm, y) for y in test.outputs]
    for side in ("task-vector", "few-shot", "zero-shot"):
        hits[f"authors {side}"] = [i == g for i, g in zip(items["ids"][side], gold)]
    replayed = item_by_item(lm, ours, hiddens, theirs_layer, test.inputs)
    ours_layer = ours.state.meta.layer
    return {
        "unit": unit, "task": meta["task"], "seed": meta["seed"], "n": len(test.inputs), "hits": hits,
        "authors own score": {k: items[k] for k in ("task-vector", "few-shot", "zero-shot")},
        "layer": {"ours": ours_layer, "ours reseeded": again.state.meta.layer, "theirs": theirs_layer},
        "curve": agreement(ours.state.layer_accuracy, torch.tensor(items["dev_accuracy_by_layer"])),
        "curve reseeded": agreement(ours.state.layer_accuracy, again.state.layer_accuracy),
        "cosine at our layer": float(torch.nn.functional.cosine_similarity(
            ours.state.theta.double(), hiddens[:, ours_layer].mean(0).double(), dim=0)),
        "replayed items that agree": sum(a == b for a, b in zip(replayed, items["ids"]["task-vector"])),
        "probe": probe_gap(lm, items["probe"]),
    }


def summary(units: list[dict]) -> dict:
    """Accuracies and paired tests over the pooled items of `units` (one task's seeds, or all of them)."""
    pooled = {side: [h for u in units for h in u["hits"][side]] for side in units[0]["hits"]}
    n = len(pooled["ours"])
    return {
        "n": n, "first-token accuracy": {side: sum(h) / n for side, h in pooled.items()},
        "ours vs authors": paired(pooled["ours"], pooled["authors task-vector"]),
        "ours vs ours reseeded": paired(pooled["ours"], pooled["ours reseeded"]),
        "their mean in ours vs authors": paired(pooled["their mean in ours"], pooled["authors task-vector"]),
        "zero-shot items that agree": sum(a == b for a, b in zip(pooled["zero-shot"], pooled["authors zero-shot"])),
        "replayed items that agree": sum(u["replayed items that agree"] for u in units),
        "layers (ours, reseeded, theirs)": [list(u["layer"].values()) for u in units],
        "curve spearman": [u["curve"]["spearman"] for u in units],
        "curve spearman, ours reseeded": [u["curve reseeded"]["spearman"] for u in units],
        "cosine at our layer": [u["cosine at our layer"] for u in units],
    }


def table_row(task: str, s: dict) -> str:
    """docs/fidelity.md's row for one task's summary."""
    acc = s["first-token accuracy"]
    layers = "; ".join(f"{a}, {b} / {c}" for a, b, c in s["layers (ours, reseeded, theirs)"])
    return (accuracy_cells("task vector", task, s, acc, "authors task-vector")
            + f"{acc['their mean in ours']:.2f} | {layers} | "
            f"{mean(s['curve spearman']):.2f} / {mean(s['curve spearman, ours reseeded']):.2f} | "
            f"{mean(s['cosine at our layer']):.3f} | {s['replayed items that agree']}/{s['n']} |")


def main() -> None:
    ap = unit_args(argparse.ArgumentParser(description=__doc__.splitlines()[0]), "sentiment-s0-tv")
    args = ap.parse_args()
    lm = load_model(args.model)

    def describe(u: dict) -> str:
        return (f"layers {u['layer']}, curve {u['curve']}, cosine {u['cosine at our layer']:.3f}, "
                f"replayed {u['replayed items that agree']}/{u['n']}, probe {u['probe']}")

    units = compared(args.run, "tv", args.units, lambda unit: compare_unit(lm, args.run, unit), describe)
    report(args.run, "tv", units, summary, table_row)

if __name__ == "__main__":
    main()
