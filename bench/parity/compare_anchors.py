"""ICL Lab's saliency information flow beside the anchors authors' code, on the same prompts: the per-layer curves.

    PYTHONPATH=. python bench/parity/compare_anchors.py handover --run /work/parity-run sentiment headline-topic \
        --seeds 0 1
    PYTHONPATH=. python bench/parity/compare_anchors.py compare --run /work/parity-run sentiment-s0-anchors ...

`handover` writes the model's checkpoint as handover.py does (`<model>/`, when it is not there yet) and, per task
and seed, `data/<task>-s<seed>-anchors/`: ICL Lab's prompts of its flow analysis
(`task_prompts`: the seeded `eval` split's test items, each after one demonstration per class, the CLI's default
and the authors' `demonstration_shot` 1), as `train.json`/`test.json` ({input, output}, as handover.py writes),
`prompts.json` (the prompt texts), and in the authors' dataset format `authors-train.json` ({text, label}),
`authors-test.json` (the same, and each item's demonstrations as indices into the training part, in ICL Lab's
order) and `labels.json` (their label_dict: the labels with the answer's leading space).

`compare` reads what anchors_authors.py wrote (`anchors/<unit>/authors/items.json`), computes ICL Lab's flow on the
same prompts (`information_flow`, the function behind `icl-lab flow` and the app's flow figure, one prompt at a
time), and checks item by item that both sides saw the same prompt (the same text, the same token ids, the same
label-word and final positions) before comparing the flows: per item and per layer, and the curves the two sides
plot (the mean over items, each layer rescaled to sum to 1: their attention_attr_ana.ipynb, our
`FlowResult.normalised`). Writes `anchors/<unit>/compare.json` and `anchors/summary.json`, and prints a markdown
row per task.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import torch
from compare_site import agreement, probe_gap
from handover import records, write_checkpoint
from units import by_task, compared, handover_and_compare

from icr_app.analyses.anchors.saliency import FLOWS, flow_scores, information_flow, task_prompts
from icr_app.core.models import LoadedModel, load_model
from icr_app.core.prompts import SHOTS, answer_text
from icr_app.core.tasks import builtin_task, split

SHOTS_PER_CLASS = None  # ICL Lab's `shots=None`: one demonstration per class, the authors' demonstration_shot 1


def unit_name(task: str, seed: int) -> str:
    return f"{task}-s{seed}-anchors"


def handover(lm: LoadedModel, run: Path, name: str, seed: int, n_test: int) -> Path:
    """Write one unit's folder: ICL Lab's flow prompts for `name` and `seed`, in both sides' formats."""
    task = builtin_task(name)  # a classification task: its label words are the anchors
    prompts = task_prompts(lm, task, n_test, SHOTS_PER_CLASS, seed)
    train, test = split(task, n_test, seed, min_train=max(2, SHOTS))  # the split as handover.py hands it over
    if [p.query for p in prompts] != list(test.examples):
        raise SystemExit(f"{name}: the flow's test items are not the eval split's")
    pool = list(train.examples)
    labels = list(task.labels)
    folder = run / "data" / unit_name(name, seed)
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "train.json": records(train.examples), "test.json": records(test.examples),
        "prompts.json": [p.text for p in prompts], "labels.json": [answer_text(label) for label in labels],
        "authors-train.json": [{"text": e.input, "label": labels.index(e.output)} for e in pool],
        "authors-test.json": [{"text": p.query.input, "label": labels.index(p.query.output), "item": i,
                               "demos": [pool.index(d) for d in p.demos]} for i, p in enumerate(prompts)],
        "split.json": {"task": name, "kind": task.kind, "seed": seed, "n_test": n_test, "min_train": max(2, SHOTS),
                       "shots": SHOTS_PER_CLASS, "method": "anchors"},
    }
    for file, rows in files.items():
        (folder / file).write_text(json.dumps(rows, ensure_ascii=False, indent=1))
    return folder


def ours(lm: LoadedModel, run: Path, unit: str) -> tuple[list, dict]:
    """ICL Lab's prompts for the unit (rebuilt, and checked against the handed-over texts) and its flow: per item
    (3, L) raw flows, the FlowResult, and per item the flows of a variant that is not the paper's (the absolute
    value inside the head sum: Σ_h |A_h ⊙ ∂L/∂A_h|), the yardstick of how far a small change in the method moves
    the curves."""
    meta = json.loads((run / "data" / unit / "split.json").read_text())
    task = builtin_task(meta["task"])
    prompts = task_prompts(lm, task, meta["n_test"], meta["shots"], meta["seed"])
    if [p.text for p in prompts] != json.loads((run / "data" / unit / "prompts.json").read_text()):
        raise SystemExit(f"{unit}: ICL Lab's prompts changed since the hand-over; rerun it")
    per_item: dict[str, list[torch.Tensor]] = {"items": [], "variant": []}

    def keep(p, heads: torch.Tensor) -> None:
        for key, flow in (("items", heads.sum(1).abs()), ("variant", heads.abs().sum(1))):
            scores = flow_scores(flow, p)
            per_item[key].append(torch.stack([scores[k].cpu() for k in FLOWS]))

    result = information_flow(lm, task, prompts, keep=keep)
    return prompts, {**{k: torch.stack(v).double() for k, v in per_item.items()}, "result": result}


def normalised(mean: torch.Tensor) -> torch.Tensor:
    """(3, L) mean flows, each layer rescaled to sum to 1 (their notebook; our FlowResult.normalised)."""
    return mean / mean.sum(0, keepdim=True)


def compare_unit(lm: LoadedModel, run: Path, unit: str) -> dict:
    theirs = json.loads((run / "anchors" / unit / "authors" / "items.json").read_text())
    meta = json.loads((run / "data" / unit / "split.json").read_text())
    t0 = time.perf_counter()
    prompts, mine = ours(lm, run, unit)
    seconds = time.perf_counter() - t0
    items = theirs["items"]
    same = {
        "text": sum(p.text == t["prompt"] for p, t in zip(prompts, items)),
        "input_ids": sum(list(p.input_ids) == t["input_ids"] for p, t in zip(prompts, items)),
        "label_positions": sum(p.label_positions == t["label_positions"] for p, t in zip(prompts, items)),
        "final_position": sum(p.target == t["final_position"] for p, t in zip(prompts, items)),
    }
    a = mine["items"]  # (n, 3, L)
    b = torch.tensor([[t["flows"][k] for k in FLOWS] for t in items], dtype=torch.float64)
    mean_a, mean_b = a.mean(0), b.mean(0)
    if not torch.allclose(mean_a.float(), torch.tensor([mine["result"].raw[k] for k in FLOWS])):
        raise SystemExit(f"{unit}: the per-item flows do not average to information_flow's")
    rel = (a - b).abs() / b.abs().clamp(min=1e-30)
    norm_a, norm_b = normalised(mean_a), normalised(mean_b)
    variant = mine["variant"]
    lead_a, lead_b = norm_a[1] > norm_a[0], norm_b[1] > norm_b[0]  # S_pq > S_wp, per layer
    return {
        "unit": unit, "task": meta["task"], "seed": meta["seed"], "n": len(items), "n_layers": a.shape[-1],
        "same prompts": same,
        "curves": {k: agreement(mean_a[i], mean_b[i]) for i, k in enumerate(FLOWS)},
        "curves, all three": agreement(mean_a, mean_b),
        "items, all flows": agreement(a, b),
        "max abs diff, normalised curves": float((norm_a - norm_b).abs().max()),
        "max rel diff, raw per item": float(rel.max()),
        "median rel diff, raw per item": float(rel.median()),
        "variant (abs inside the head sum) vs theirs": {
            "curves": {k: agreement(variant.mean(0)[i], mean_b[i]) for i, k in enumerate(FLOWS)},
            "max abs diff, normalised curves": float((normalised(variant.mean(0)) - norm_b).abs().max()),
            "median rel diff, raw per item": float(((variant - b).abs() / b.abs().clamp(min=1e-30)).median())},
        "layers where S_pq > S_wp (ours, theirs)": [int(lead_a.sum()), int(lead_b.sum())],
        "layers where the two disagree on S_pq > S_wp": int((lead_a != lead_b).sum()),
        "normalised": {"ours": {k: norm_a[i].tolist() for i, k in enumerate(FLOWS)},
                       "theirs": {k: norm_b[i].tolist() for i, k in enumerate(FLOWS)}},
        "seconds per item": {"ours": seconds / len(items), "theirs": theirs["settings"]["seconds_per_item"]},
        "probe": probe_gap(lm, theirs["probe"]),
        "their settings": theirs["settings"],
    }


def table_row(task: str, units: list[dict]) -> str:
    """docs/fidelity.md's row for one task's units."""
    n = sum(u["n"] for u in units)
    same = sum(min(u["same prompts"].values()) for u in units)

    def gap(key: str) -> float:  # the worst flow's 1 - correlation, over the task's units
        return max(1 - v[key] for u in units for v in u["curves"].values())

    lead = "; ".join("{} / {}".format(*u["layers where S_pq > S_wp (ours, theirs)"]) for u in units)
    return (f"| anchors: saliency flow | {task} | {n} | {same}/{n} | "
            f"{gap('pearson'):.0e} / {gap('spearman'):.0e} | "
            f"{max(u['max abs diff, normalised curves'] for u in units):.1e} | "
            f"{max(u['max rel diff, raw per item'] for u in units):.1e} | {lead} |")


def main() -> None:
    ap, _ = handover_and_compare(__doc__.splitlines()[0], "sentiment-s0-anchors",
                                 "built-in classification tasks whose labels' first tokens differ")
    args = ap.parse_args()
    lm = load_model(args.model)
    if args.command == "handover":
        if not (args.run / args.model / "config.json").is_file():  # the checkpoint as handover.py writes it
            write_checkpoint(Path(lm.model.name_or_path), args.run / args.model)
        for name in args.tasks:
            for seed in args.seeds:
                print(handover(lm, args.run, name, seed, args.n_test))
        return

    def describe(u: dict) -> str:
        return (f"same prompts {u['same prompts']} of {u['n']}, curves {u['curves']}, "
                f"max rel diff per item {u['max rel diff, raw per item']:.2e}, probe {u['probe']}")

    units = compared(args.run, "anchors", args.units, lambda unit: compare_unit(lm, args.run, unit), describe)
    summary = {task: {"units": [u["unit"] for u in us], "row": table_row(task, us)}
               for task, us in by_task(units).items()}
    (args.run / "anchors" / "summary.json").write_text(json.dumps(summary, indent=1))
    print("| analysis | task | n | same prompts | curve 1 − r / 1 − ρ (worst flow) | max abs diff, normalised | "
          "max rel diff, per item | layers S_pq > S_wp, ours / theirs |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(s["row"] for s in summary.values()))


if __name__ == "__main__":
    main()
