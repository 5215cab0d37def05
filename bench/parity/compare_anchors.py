"""ICL Lab's anchor analyses beside their authors' code on the same prompts: flow, isolation, compression, re-weighting.

    PYTHONPATH=. python bench/parity/compare_anchors.py handover --run $PARITY_RUN sentiment headline-topic \
        --seeds 0 1 [--analysis isolation|compression|reweighting]
    PYTHONPATH=. python bench/parity/compare_anchors.py compare --run $PARITY_RUN sentiment-s0-anchors ...
    PYTHONPATH=. python bench/parity/compare_anchors.py compare-isolation --run $PARITY_RUN \
        sentiment-s0-isolation ...
    PYTHONPATH=. python bench/parity/compare_anchors.py compare-compression --run $PARITY_RUN \
        sentiment-s0-compression ... [--design ported]
    PYTHONPATH=. python bench/parity/compare_anchors.py compare-reweighting --run $PARITY_RUN \
        sentiment-s0-reweighting ...

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

`handover --analysis isolation` writes `data/<task>-s<seed>-isolation/` the same way from isolation's prompts in
the authors' design (`fixed_demo_prompts`: one demonstration per class, one set shared by every item), the set
as `shared-demos.json` (indices into the training part, in ICL Lab's order) in place of per-item `demos`.
`compare-isolation` reads what anchors_authors.py --analysis isolation wrote (`anchors/<unit>/authors/isolation.json`),
runs ICL Lab's isolation on the same prompts with the same K (`isolation.predict` per condition, and
`isolation_experiment`, whose rows the per-item predictions must give), checks the prompts are the same as
`compare` does, and compares per condition (none, label words in the first K layers, in the last K): the
predicted label item by item, loyalty to each side's unisolated run, accuracy, and the exact McNemar of the two
sides' correctness (`icr_app.stats.paired`). The random-token controls draw different positions on the two sides
(theirs anew in every layer and forward pass, ours once per prompt), so they are compared as aggregates only.
Writes `anchors/<unit>/compare.json` and prints a markdown row per unit.

`handover --analysis compression` writes `data/<task>-s<seed>-compression/` as isolation's (the same prompts).
`compare-compression [--design matched|ported]` reads anchors_authors.py --analysis compression's
`compression-<design>.json`, computes per item the label words' logits of ICL Lab's three runs
(`compression_experiment`'s: full few-shot, the full cache, the anchors cache; its functions and batch, and its
own accuracy and loyalty, which the per-item logits must give), and sets them beside theirs: full few-shot and the
full cache beside their full ICL, the anchors cache beside their Hidden_anchor. Per pair: the same predicted label,
accuracy and loyalty on each side, McNemar, the largest label-logit difference; and whether the two caches keep
the same positions. Their Text_anchor and Hidden_random (ICL Lab has neither) are kept as aggregates. Writes
`anchors/<unit>/compare-compression-<design>.json`.

`handover --analysis reweighting` adds to the shared set ICL Lab's training examples (`reweight-train.json`) and
the order reweight_experiment visits them in each epoch (`reweight-order.json`). `compare-reweighting` runs
`reweight_experiment` (ICL Lab's defaults, the paper's recipe) and, per item, the label words' logits before and
after with the β it learnt; beside theirs: the same label, accuracy, McNemar, logit difference, and the learnt
weights' Pearson r and largest difference (their columns are classes, ours demonstrations: mapped). Writes
`anchors/<unit>/compare-reweighting.json`.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import asdict
from pathlib import Path

import torch
from compare_site import agreement, probe_gap
from handover import records, write_checkpoint
from units import by_task, compared, handover_and_compare, unit_args

from icr_app.analyses.anchors import reweighting
from icr_app.analyses.anchors.compression import anchor_positions, compression_experiment, fixed_demo_prompts
from icr_app.analyses.anchors.isolation import isolation_experiment, predict
from icr_app.analyses.anchors.prefix import answer_logits, demo_cache, shared_prefix
from icr_app.analyses.anchors.prompt import AnchorPrompt, first_label_ids
from icr_app.analyses.anchors.reweighting import reweight_experiment, reweighted, training_examples
from icr_app.analyses.anchors.saliency import FLOWS, flow_scores, information_flow, task_prompts
from icr_app.core.models import LoadedModel, load_model
from icr_app.core.prompts import SHOTS, Template
from icr_app.core.scoring import encode, prefill
from icr_app.core.tasks import Task, builtin_task, split
from icr_app.stats import paired

SHOTS_PER_CLASS = None  # ICL Lab's `shots=None`: one demonstration per class, the authors' demonstration_shot 1
# re-weighting's settings, ICL Lab's defaults: the paper's (4 training examples per class, 10 epochs, Adam lr 0.01,
# their experiment_reweighting.py's lr; ReweightingArgs' own default lr is 0.1)
RW = {"per_class": 4, "epochs": 10, "lr": 0.01}


def unit_name(task: str, seed: int, analysis: str = "flow") -> str:
    return f"{task}-s{seed}-{'anchors' if analysis == 'flow' else analysis}"


def analysis_prompts(lm: LoadedModel, task: Task, n_test: int, seed: int, analysis: str,
                     ) -> tuple[list[AnchorPrompt], int]:
    """ICL Lab's prompts of one analysis and the `min_train` of the split they come from. The flow's (`task_prompts`)
    draw each item's demonstrations; the others' are the authors' design, one set shared by every item
    (`fixed_demo_prompts`)."""
    if analysis == "flow":
        return task_prompts(lm, task, n_test, SHOTS_PER_CLASS, seed), max(2, SHOTS)
    return fixed_demo_prompts(lm, task, n_test, SHOTS_PER_CLASS, seed, Template())[1], max(2, len(task.labels))


def handover(lm: LoadedModel, run: Path, name: str, seed: int, n_test: int, analysis: str = "flow") -> Path:
    """Write one unit's folder: ICL Lab's prompts of `analysis` for `name` and `seed`, in both sides' formats."""
    task = builtin_task(name)  # a classification task: its label words are the anchors
    prompts, min_train = analysis_prompts(lm, task, n_test, seed, analysis)
    train, test = split(task, n_test, seed, min_train=min_train)  # the split as handover.py hands it over
    if [p.query for p in prompts] != list(test.examples):
        raise SystemExit(f"{name}: the {analysis}'s test items are not the eval split's")
    pool = list(train.examples)
    labels = list(task.labels)
    shared = analysis != "flow"  # their shallow_layer.py, compress.py, reweighting.py: one demonstration set
    folder = run / "data" / unit_name(name, seed, analysis)
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "train.json": records(train.examples), "test.json": records(test.examples),
        "prompts.json": [p.text for p in prompts], "labels.json": [Template().answer_text(label) for label in labels],
        "authors-train.json": [{"text": e.input, "label": labels.index(e.output)} for e in pool],
        "authors-test.json": [{"text": p.query.input, "label": labels.index(p.query.output), "item": i}
                              | ({} if shared else {"demos": [pool.index(d) for d in p.demos]})
                              for i, p in enumerate(prompts)],
        "split.json": {"task": name, "kind": task.kind, "seed": seed, "n_test": n_test, "min_train": min_train,
                       "shots": SHOTS_PER_CLASS, "method": "anchors", "analysis": analysis},
    }
    if shared:
        files["shared-demos.json"] = [pool.index(d) for d in prompts[0].demos]
    if analysis == "reweighting":
        files |= reweighting_files(train, prompts[0].demos, pool, seed)
    for file, rows in files.items():
        (folder / file).write_text(json.dumps(rows, ensure_ascii=False, indent=1))
    return folder


def reweighting_files(train: Task, demos: tuple, pool: list, seed: int) -> dict[str, list]:
    """Re-weighting's training examples (`training_examples`, as reweight_experiment draws them) as indices into the
    training part, and the order reweight_experiment visits them in each epoch (its generator, seeded as it seeds
    it): their reweighting.py takes both (anchors_setup.sh's change 7)."""
    examples = training_examples(train, list(demos), RW["per_class"], seed)
    rng, orders = random.Random(seed), []
    for _ in range(RW["epochs"]):
        orders.append(list(range(len(examples))))
        rng.shuffle(orders[-1])
    return {"reweight-train.json": [pool.index(e) for e in examples], "reweight-order.json": orders}


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


def same_prompts(prompts: list[AnchorPrompt], items: list[dict]) -> dict[str, int]:
    """How many items have the same prompt text, token ids, label-word positions and final position on both
    sides."""
    return {
        "text": sum(p.text == t["prompt"] for p, t in zip(prompts, items)),
        "input_ids": sum(list(p.input_ids) == t["input_ids"] for p, t in zip(prompts, items)),
        "label_positions": sum(p.label_positions == t["label_positions"] for p, t in zip(prompts, items)),
        "final_position": sum(p.target == t["final_position"] for p, t in zip(prompts, items)),
    }


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
    same = same_prompts(prompts, items)
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


K = 5  # layers isolated: ICL Lab's default (`--k`), their ShallowArgs.mask_layer_num's default
BATCH = 8  # ICL Lab's default batch of isolation's forward passes (`--batch-size`)


def our_isolation(lm: LoadedModel, run: Path, unit: str) -> tuple[list[AnchorPrompt], dict, dict]:
    """ICL Lab's isolation prompts for the unit (rebuilt, and checked against the handed-over texts), per
    condition its per-item predicted labels (`isolation.predict`, what `isolation_experiment` runs), and
    `isolation_experiment`'s own rows (loyalty, accuracy), which include its random-token control."""
    meta = json.loads((run / "data" / unit / "split.json").read_text())
    task = builtin_task(meta["task"])
    prompts, _ = analysis_prompts(lm, task, meta["n_test"], meta["seed"], "isolation")
    if [p.text for p in prompts] != json.loads((run / "data" / unit / "prompts.json").read_text()):
        raise SystemExit(f"{unit}: ICL Lab's prompts changed since the hand-over; rerun it")
    label_ids, rows = first_label_ids(lm, task.labels), [p.label_positions for p in prompts]
    layers = {"none": set(), f"label words, first {K}": set(range(K)),
              f"label words, last {K}": set(range(lm.n_layers - K, lm.n_layers))}
    preds = {name: predict(lm, prompts, label_ids, rows if ls else None, ls, BATCH) for name, ls in layers.items()}
    table = {r.condition if r.layers == "-" else f"{r.condition}, {r.layers}": asdict(r) for r in
             isolation_experiment(lm, prompts, task.labels, k=K, seed=meta["seed"], batch_size=BATCH)}
    return prompts, preds, table


def rates(preds: list[int], base: list[int], gold: list[int]) -> dict[str, float]:
    n = len(preds)
    return {"loyalty": sum(a == b for a, b in zip(preds, base)) / n,
            "accuracy": sum(a == g for a, g in zip(preds, gold)) / n}


def compared_condition(ours: list[int], theirs: dict, bases: tuple[list[int], list[int]], gold: list[int]) -> dict:
    """One condition item by item: the same predicted label, loyalty and accuracy on each side, the paired
    McNemar of the two sides' correctness, the items where they differ."""
    gaps = [sorted(lg, reverse=True) for lg in theirs["label_logits"]]
    return {
        "same label": sum(a == b for a, b in zip(ours, theirs["predicted"])),
        "ours": rates(ours, bases[0], gold), "theirs": rates(theirs["predicted"], bases[1], gold),
        "ours vs theirs, correct": paired([a == g for a, g in zip(ours, gold)],
                                          [b == g for b, g in zip(theirs["predicted"], gold)]),
        # how close their nearest call was: a difference this small between the two sides' logits flips a label
        "smallest top-two label-logit gap, theirs": min(float(g[0] - g[1]) for g in gaps),
        "differing items": [{"item": i, "ours": a, "theirs": b, "their label logits": theirs["label_logits"][i]}
                            for i, (a, b) in enumerate(zip(ours, theirs["predicted"])) if a != b],
        "predicted": {"ours": ours, "theirs": theirs["predicted"]}}


def compare_isolation_unit(lm: LoadedModel, run: Path, unit: str) -> dict:
    theirs = json.loads((run / "anchors" / unit / "authors" / "isolation.json").read_text())
    meta = json.loads((run / "data" / unit / "split.json").read_text())
    t0 = time.perf_counter()
    prompts, mine, table = our_isolation(lm, run, unit)
    seconds = time.perf_counter() - t0
    gold, their_conditions = theirs["gold"], theirs["conditions"]
    labels = list(builtin_task(meta["task"]).labels)
    if [labels.index(p.query.output) for p in prompts] != gold:
        raise SystemExit(f"{unit}: the two sides' gold labels differ")
    bases = (mine["none"], their_conditions["none"]["predicted"])
    conditions = {name: compared_condition(preds, their_conditions[name], bases, gold) for name, preds in mine.items()}
    for name, c in conditions.items():
        if c["ours"] != {k: table[name][k] for k in c["ours"]}:
            raise SystemExit(f"{unit}: the per-item predictions do not give isolation_experiment's {name} row")
    control = {name: {"ours": {k: table[name][k] for k in ("loyalty", "accuracy")},
                      "theirs": rates(c["predicted"], bases[1], gold)}
               for name, c in their_conditions.items() if name.startswith("random")}
    return {"unit": unit, "task": meta["task"], "seed": meta["seed"], "n": len(gold), "k": K,
            "same prompts": same_prompts(prompts, theirs["items"]), "conditions": conditions,
            "random-token control (aggregate only)": control,
            "seconds": {"ours": seconds, "theirs": theirs["settings"]["seconds"]}, "their settings": theirs["settings"]}


def isolation_row(u: dict) -> str:
    """A markdown row per unit: same prompts, same labels per condition, loyalty and accuracy both sides."""
    c = u["conditions"]
    first, last = c[f"label words, first {K}"], c[f"label words, last {K}"]

    def pair(cond: dict, key: str) -> str:
        return f"{cond['ours'][key]:.3f} / {cond['theirs'][key]:.3f}"

    return (f"| {u['unit']} | {u['n']} | {min(u['same prompts'].values())}/{u['n']} | "
            + " / ".join(str(v["same label"]) for v in c.values())
            + f" | {pair(first, 'loyalty')} | {pair(last, 'loyalty')} | "
            + "; ".join(pair(v, "accuracy") for v in c.values())
            + " | " + "; ".join(f"{v['ours vs theirs, correct']['p_mcnemar']:.2f}" for v in c.values()) + " |")


def compare_isolation(lm: LoadedModel, run: Path, names: list[str]) -> None:
    def describe(u: dict) -> str:
        return (f"same prompts {u['same prompts']} of {u['n']}, same label "
                f"{ {k: v['same label'] for k, v in u['conditions'].items()} }")

    units = compared(run, "anchors", names, lambda unit: compare_isolation_unit(lm, run, unit), describe)
    print(f"| unit | n | same prompts | same label: none / first {K} / last {K} | loyalty first {K}, ours / theirs | "
          f"loyalty last {K}, ours / theirs | accuracy none; first {K}; last {K}, ours / theirs | McNemar p |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(isolation_row(u) for u in units))


COMPRESS_BATCH = 16  # compression_experiment's default batch
# ICL Lab's runs beside theirs (anchors_authors.py's COMPRESS_RUNS): full few-shot is their full ICL, the anchors
# cache their Hidden_anchor; ICL Lab's full cache (the whole demonstrations cached) is also set beside their full ICL
PAIRS = {"full few-shot": "full ICL", "full cache": "full ICL", "anchors cache": "Hidden_anchor"}


@torch.no_grad()
def our_compression(lm: LoadedModel, run: Path, unit: str) -> tuple[list[AnchorPrompt], dict, dict]:
    """ICL Lab's compression prompts for the unit (rebuilt, checked against the hand-over), per run the label words'
    logits per item (what compression_experiment computes, by its functions and batch), and compression_experiment's
    own variants, which the per-item labels must give."""
    meta = json.loads((run / "data" / unit / "split.json").read_text())
    task = builtin_task(meta["task"])
    prompts, _ = analysis_prompts(lm, task, meta["n_test"], meta["seed"], "compression")
    if [p.text for p in prompts] != json.loads((run / "data" / unit / "prompts.json").read_text()):
        raise SystemExit(f"{unit}: ICL Lab's prompts changed since the hand-over; rerun it")
    label_ids, prefix = first_label_ids(lm, task.labels), shared_prefix(prompts)
    batches = [prompts[s: s + COMPRESS_BATCH] for s in range(0, len(prompts), COMPRESS_BATCH)]

    def cached(keep: list[int] | None) -> torch.Tensor:
        demos = demo_cache(lm, prefix, keep)
        return torch.cat([answer_logits(lm, demos, b)[:, label_ids] for b in batches])

    logits = {"full few-shot": torch.cat([prefill(lm, encode(lm, [p.text for p in b]))[:, label_ids].float()
                                          for b in batches]),
              "full cache": cached(None), "anchors cache": cached(anchor_positions(prompts[0]))}
    variants = compression_experiment(lm, task, prompts, COMPRESS_BATCH).to_json()["variants"]
    return prompts, {k: v.tolist() for k, v in logits.items()}, variants


def compressed_run(ours: list[list[float]], theirs: dict, bases: tuple[list[int], list[int]], gold: list[int]) -> dict:
    """One of ICL Lab's runs beside its counterpart of theirs: isolation's per-item comparison, and the largest
    difference between the two sides' label-word logits."""
    preds = torch.tensor(ours).argmax(-1).tolist()
    diff = (torch.tensor(ours) - torch.tensor(theirs["label_logits"])).abs().max()
    return compared_condition(preds, theirs, bases, gold) | {"max abs label-logit diff": float(diff)}


def compare_compression_unit(lm: LoadedModel, run: Path, unit: str, design: str) -> dict:
    theirs = json.loads((run / "anchors" / unit / "authors" / f"compression-{design}.json").read_text())
    t0 = time.perf_counter()
    prompts, mine, variants = our_compression(lm, run, unit)
    seconds = time.perf_counter() - t0
    gold, their_runs = theirs["gold"], theirs["runs"]
    bases = (torch.tensor(mine["full few-shot"]).argmax(-1).tolist(), their_runs["full ICL"]["predicted"])
    runs = {f"{ours} / {PAIRS[ours]}": compressed_run(mine[ours], their_runs[PAIRS[ours]], bases, gold)
            for ours in PAIRS}
    for r, ours in zip(runs.values(), PAIRS):
        if r["ours"] != {k: variants[ours][k] for k in r["ours"]}:
            raise SystemExit(f"{unit}: the per-item logits do not give compression_experiment's {ours}")
    kept = anchor_positions(prompts[0])
    return {"unit": unit, "design": design, "n": len(gold), "runs": runs,
            "same prompts": {"text": sum(p.text == t["prompt"] for p, t in zip(prompts, theirs["items"])),
                             "input_ids": sum(list(p.input_ids) == t["input_ids"]
                                              for p, t in zip(prompts, theirs["items"]))},
            "cache": {"ours": kept, "theirs": theirs["cache"]["positions"],
                      "same": kept == theirs["cache"]["positions"],
                      "query starts at, ours / theirs": [prompts[0].prefix_len, theirs["cache"]["query_offset"]],
                      "cached tokens / demonstration tokens": [len(kept), prompts[0].prefix_len]},
            "theirs only (aggregate)": {k: rates(their_runs[k]["predicted"], bases[1], gold)
                                        for k in ("Text_anchor", "Hidden_random")},
            "seconds": {"ours": seconds, "theirs": theirs["settings"]["seconds"]}}


def compression_row(u: dict) -> str:
    """A markdown row per unit: same cache, then per run the same label, accuracy both sides, McNemar, logit diff."""
    r = u["runs"].values()
    return (f"| {u['unit']} | {u['design']} | {u['n']} | {min(u['same prompts'].values())}/{u['n']} | "
            f"{'yes' if u['cache']['same'] else 'no'} ({len(u['cache']['ours'])} / {len(u['cache']['theirs'])}) | "
            + " / ".join(str(v["same label"]) for v in r) + " | "
            + "; ".join(f"{v['ours']['accuracy']:.3f} / {v['theirs']['accuracy']:.3f}" for v in r) + " | "
            + "; ".join(f"{v['ours vs theirs, correct']['p_mcnemar']:.2f}" for v in r) + " | "
            + "; ".join(f"{v['max abs label-logit diff']:.1e}" for v in r) + " |")


def compare_compression(lm: LoadedModel, run: Path, names: list[str], design: str) -> None:
    def describe(u: dict) -> str:
        return f"same cache {u['cache']['same']}, same label { {k: v['same label'] for k, v in u['runs'].items()} }"

    units = compared(run, "anchors", names, lambda unit: compare_compression_unit(lm, run, unit, design), describe,
                     f"compare-compression-{design}.json")
    runs = " / ".join(f"{a} vs {b}" for a, b in PAIRS.items())
    print(f"| unit | design | n | same prompts | same cache (positions, ours / theirs) | same label: {runs} | "
          "accuracy, ours / theirs | McNemar p | max abs label-logit diff |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(compression_row(u) for u in units))


@torch.no_grad()
def reweighted_logits(lm: LoadedModel, demos, prompts: list[AnchorPrompt], label_ids: torch.Tensor,
                      beta: torch.Tensor | None) -> list[list[float]]:
    """The label words' logits per item, as re-weighting's `accuracy` computes them (its batch, its intervention)."""
    out = []
    for s in range(0, len(prompts), COMPRESS_BATCH):
        b = prompts[s: s + COMPRESS_BATCH]
        ctx = reweighted(lm, beta, b[0].label_tokens, demos.prefix_len) if beta is not None else None
        out += answer_logits(lm, demos, b, ctx)[:, label_ids].tolist()
    return out


def our_reweighting(lm: LoadedModel, run: Path, unit: str) -> tuple[list[AnchorPrompt], dict, dict]:
    """ICL Lab's `reweight_experiment` on the unit's prompts, its `accuracy` watched to keep the cache and the learnt
    β it scores with; per item the label words' logits before and after, β, and its result."""
    meta = json.loads((run / "data" / unit / "split.json").read_text())
    task = builtin_task(meta["task"])
    train, prompts = fixed_demo_prompts(lm, task, meta["n_test"], SHOTS_PER_CLASS, meta["seed"], Template())
    if [p.text for p in prompts] != json.loads((run / "data" / unit / "prompts.json").read_text()):
        raise SystemExit(f"{unit}: ICL Lab's prompts changed since the hand-over; rerun it")
    seen: list = []
    score = reweighting.accuracy
    reweighting.accuracy = lambda *a: seen.append(a) or score(*a)  # (lm, demos, prompts, labels, beta, batch)
    try:
        result = reweight_experiment(lm, task, train, prompts, Template(), per_class=RW["per_class"],
                                     epochs=RW["epochs"], lr=RW["lr"], seed=meta["seed"], batch_size=COMPRESS_BATCH)
    finally:
        reweighting.accuracy = score
    (_, demos, *_), (*_, beta, _) = seen  # before (β None), after
    label_ids = first_label_ids(lm, task.labels)
    logits = {name: reweighted_logits(lm, demos, prompts, label_ids, b) for name, b in (("before", None),
                                                                                       ("after", beta))}
    return prompts, {**logits, "beta": beta}, result.to_json()


def compare_reweighting_unit(lm: LoadedModel, run: Path, unit: str) -> dict:
    theirs = json.loads((run / "anchors" / unit / "authors" / "reweighting.json").read_text())
    t0 = time.perf_counter()
    prompts, mine, result = our_reweighting(lm, run, unit)
    seconds = time.perf_counter() - t0
    gold, labels = theirs["gold"], list(builtin_task(json.loads((run / "data" / unit / "split.json").read_text())
                                                     ["task"]).labels)
    bases = (torch.tensor(mine["before"]).argmax(-1).tolist(), theirs["runs"]["before"]["predicted"])
    runs = {name: compressed_run(mine[name], theirs["runs"][name], bases, gold) for name in ("before", "after")}
    for name in runs:
        if runs[name]["ours"]["accuracy"] != result[f"accuracy_{name}"]:
            raise SystemExit(f"{unit}: the per-item logits do not give reweight_experiment's accuracy {name}")
    # their weight column j is class j's label word; ICL Lab's β column k is demonstration k's
    cols = [labels.index(d.output) for d in prompts[0].demos]
    a, b = mine["beta"].flatten(), torch.tensor(theirs["weights"])[:, :, cols].flatten()
    n = len(json.loads((run / "data" / unit / "reweight-train.json").read_text()))  # training examples
    return {"unit": unit, "n": len(gold), "runs": runs, "n_train": n,
            "weights": {"pearson": float(torch.corrcoef(torch.stack([a, b]))[0, 1]),
                        "max abs diff": float((a - b).abs().max()), "mean abs, ours / theirs":
                        [float(a.abs().mean()), float(b.abs().mean())]},
            # theirs divides each epoch's summed loss by the number of examples less one (their loop's last idx)
            "epoch losses, ours / theirs (rescaled to a mean)": [result["losses"],
                                                                  [v * (n - 1) / n for v in theirs["losses"]]],
            "seconds": {"ours": seconds, "theirs": theirs["settings"]["seconds"]}}


def reweighting_row(u: dict) -> str:
    r, w = u["runs"], u["weights"]
    return (f"| {u['unit']} | {u['n']} | {u['n_train']} | {r['before']['same label']} / {r['after']['same label']} | "
            + "; ".join(f"{v['ours']['accuracy']:.3f} / {v['theirs']['accuracy']:.3f}" for v in r.values()) + " | "
            + "; ".join(f"{v['ours vs theirs, correct']['p_mcnemar']:.2f}" for v in r.values()) + " | "
            + "; ".join(f"{v['max abs label-logit diff']:.1e}" for v in r.values())
            + f" | {w['pearson']:.6f} | {w['max abs diff']:.1e} |")


def compare_reweighting(lm: LoadedModel, run: Path, names: list[str]) -> None:
    def describe(u: dict) -> str:
        return f"same label {[v['same label'] for v in u['runs'].values()]}, weights {u['weights']}"

    units = compared(run, "anchors", names, lambda unit: compare_reweighting_unit(lm, run, unit), describe,
                     "compare-reweighting.json")
    print("| unit | n | training examples | same label: before / after | accuracy before; after, ours / theirs | "
          "McNemar p | max abs label-logit diff | weights' Pearson r | weights' max abs diff |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(reweighting_row(u) for u in units))


def main() -> None:
    ap, sub = handover_and_compare(__doc__.splitlines()[0], "sentiment-s0-anchors",
                                   "built-in classification tasks whose labels' first tokens differ")
    sub.choices["handover"].add_argument("--analysis", choices=["flow", "isolation", "compression", "reweighting"],
                                         default="flow", help="whose prompts: the flow's (per-item demonstrations), "
                                                              "or the others' (one shared set)")
    unit_args(sub.add_parser("compare-isolation", help="compare ours with the authors' isolation on each unit"),
              "sentiment-s0-isolation")
    unit_args(sub.add_parser("compare-compression", help="compare ours with the authors' compression on each unit"),
              "sentiment-s0-compression").add_argument("--design", choices=["matched", "ported"], default="matched",
                                                       help="which of anchors_authors.py's compression runs")
    unit_args(sub.add_parser("compare-reweighting", help="compare ours with the authors' re-weighting on each unit"),
              "sentiment-s0-reweighting")
    args = ap.parse_args()
    lm = load_model(args.model)
    if args.command == "handover":
        if not (args.run / args.model / "config.json").is_file():  # the checkpoint as handover.py writes it
            write_checkpoint(Path(lm.model.name_or_path), args.run / args.model)
        for name in args.tasks:
            for seed in args.seeds:
                print(handover(lm, args.run, name, seed, args.n_test, args.analysis))
        return
    if args.command == "compare-isolation":
        compare_isolation(lm, args.run, args.units)
        return
    if args.command == "compare-compression":
        compare_compression(lm, args.run, args.units, args.design)
        return
    if args.command == "compare-reweighting":
        compare_reweighting(lm, args.run, args.units)
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
