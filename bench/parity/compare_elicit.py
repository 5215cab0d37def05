"""ICL Lab's ELICIT library entry beside its authors' on the handed-over splits: the entry, its block, and its answers.

    PYTHONPATH=. python bench/parity/compare_elicit.py handover --run $PARITY_RUN sentiment headline-topic \
        --seeds 0 1
    PYTHONPATH=. python bench/parity/compare_elicit.py compare --run $PARITY_RUN sentiment-s0-elicit ...

`handover` writes, per task and seed, `data/<task>-s<seed>-elicit/`: ICL Lab's seeded `eval` split of the task
(loaded as an open task: the authors score the first answer token's argmax over the whole vocabulary), its
training part cut as ICL Lab's `build_entry` cuts it with `MATCHED`'s settings: `train.json`, what the entry's
16-shot prompts are drawn from; `valid.json`, the held-out queries whose sweep picks the block; `test.json`, the
test items in order. The authors' code reads the three as one file, `abstractive/<unit>.json`
({"train", "valid", "test"}: their `load_dataset`'s format). The model checkpoint for transformers 4.x too
(`handover.write_checkpoint`).

`compare`: each unit is a folder `handover` wrote that elicit_authors.py ran on (`elicit/<unit>/authors`). ICL
Lab's library entry is built on the same split with the authors' settings (`build_entry` with `MATCHED`: 10
prompts of 16 demonstrations, the vector added times 2 to the state, the block swept on the same `valid`
items), and these answer the same test items through ICL Lab's ELICIT (`ElicitMethod`, its retriever replaced by
one that always picks the single entry, so that its intervention is what is compared), scored by the first-token
rule (the first generated token is the answer's first token; for the authors' side, the argmax id their run
kept): zero-shot, our entry, our entry built with another seed (the noise a rerun of ours alone shows), our
entry at their block, and the authors' entry at their block ("theirs in ours"), which must answer each item with
the token their code gave ("replayed"). Printed and written to `elicit/<unit>/compare.json`: accuracies, paired
comparisons (`icr_app.stats.paired`: exact McNemar), both chosen blocks, the agreement of the two sweeps (the
same `valid` items), the cosine of the two entries at our block, at theirs and over all blocks, the same for
ours reseeded, the states ICL Lab reads from the authors' own 10 prompts against theirs, and the probe check.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import asdict, replace
from pathlib import Path

import torch
from compare_site import agreement, item_hits, probe_gap
from handover import records, write_checkpoint
from safetensors.torch import load_file
from units import accuracy_cells, compare_and_report, handed_split, handover_and_compare, mean

from icr_app.core.capture import blocks, last_token_means
from icr_app.core.models import LoadedModel, load_model
from icr_app.core.progress import no_progress
from icr_app.core.prompts import SHOTS
from icr_app.core.scoring import first_token_id
from icr_app.core.tasks import Example, Task, builtin_task, split
from icr_app.methods.base import Answering
from icr_app.methods.elicit.library import Entry, LibraryConfig, build_entry
from icr_app.methods.elicit.method import ElicitMeta, ElicitMethod, ElicitState
from icr_app.methods.state import built_fields
from icr_app.methods.zero_shot import ZeroShotMethod
from icr_app.stats import paired

# scripts/collect_tv.sh: 16 shots, weight 2.0 on the vector (1.0 on the state); --n_trials' default: 10 prompts.
# A built-in task has 48 examples: 20 test items leave 28 to train on, 11 held out for the sweep and 17 to draw
# 16 demonstrations from (ours takes min(16, 17 - 1): the query is one of the 17 and never its own demonstration).
N_TEST, VAL_SIZE = 20, 11
MATCHED = LibraryConfig(n_prompts=10, n_demos=16, val_size=VAL_SIZE, strength=2.0, holdout=N_TEST)
RESEED = 1000  # "ours reseeded": our entry built again with seed + RESEED (its own prompts and sweep/prompt cut)
SIDES = ("zero-shot", "ours", "ours reseeded", "ours at their block", "theirs in ours")


def matched(seed: int, n_test: int = N_TEST) -> LibraryConfig:
    """MATCHED for the `eval` split of `seed`: the entry's examples are that split's training part."""
    return replace(MATCHED, holdout=n_test, split_seed=seed, seed=seed)


def entry_cut(task: Task, cfg: LibraryConfig) -> tuple[list[Example], list[Example]]:
    """(what the prompts are drawn from, the sweep's held-out queries) as `build_entry` cuts them; compare_unit
    checks the held-out queries against the entry it builds."""
    train, _ = split(task, cfg.holdout, cfg.split_seed, min_train=SHOTS)
    pool = list(train.examples)
    random.Random(cfg.seed).shuffle(pool)
    n_val = max(1, min(cfg.val_size, len(pool) // 2))
    return pool[n_val:], pool[:n_val]


def handover(run: Path, tasks: list[str], seeds: list[int], n_test: int, model: str) -> None:
    write_checkpoint(Path(load_model(model).model.name_or_path), run / model)
    for name in tasks:
        task = builtin_task(name, kind="open")
        for seed in seeds:
            unit = f"{name}-s{seed}-elicit"
            folder = run / "data" / unit
            source, val = entry_cut(task, matched(seed, n_test))
            _, test = split(task, n_test, seed, min_train=SHOTS)
            parts = {"train": records(source), "valid": records(val), "test": records(test.examples)}
            (folder / "abstractive").mkdir(parents=True, exist_ok=True)
            (folder / "abstractive" / f"{unit}.json").write_text(json.dumps(parts, ensure_ascii=False, indent=1))
            for part, rows in parts.items():
                (folder / f"{part}.json").write_text(json.dumps(rows, ensure_ascii=False, indent=1))
            meta = {"task": name, "kind": "open", "seed": seed, "n_test": n_test, "min_train": SHOTS,
                    "method": "elicit", "config": asdict(matched(seed, n_test))}
            (folder / "split.json").write_text(json.dumps(meta, indent=1))
            print(f"{folder}: " + ", ".join(f"{p} {len(rows)}" for p, rows in parts.items()))


class OneEntry(ElicitMethod):
    """ICL Lab's ELICIT over a library of one entry, which its retriever always picks above the threshold."""

    def retrieve(self, queries: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.zeros(len(queries), dtype=torch.long), torch.ones(len(queries))


def one_entry(lm: LoadedModel, answering: Answering, vector: torch.Tensor, layer: int, strength: float) -> OneEntry:
    z = torch.zeros
    meta = ElicitMeta(task="parity", **built_fields(lm, answering), build_s=0.0, library={}, strength=strength,
                      recall=1.0, threshold=0.0, queries=[])
    state = ElicitState(vectors=vector[None].float().cpu(), layers=torch.tensor([layer]), sweep=z(1, lm.n_layers + 1),
                        prompt_emb=z(1, 1, 1), w_in=z(1, 2), b_in=z(1), w_out=z(1), b_out=z(1), held_out=z(1),
                        picks=z(0), scores=z(0), meta=meta, fingerprint=lm.fingerprint)
    return OneEntry(lm, state)


def every_block(lm: LoadedModel, prompts: list[str]) -> torch.Tensor:
    """(L, d): the mean over `prompts` of each block's output at the last token, as `build_entry` reads it."""
    means = last_token_means(lm, prompts, blocks(lm), "output", MATCHED.forward_batch)
    return torch.stack([means[layer] for layer in range(lm.n_layers)]).float().cpu()


def cosine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.cosine_similarity(a.double(), b.double(), dim=-1)


def compare_unit(lm: LoadedModel, run: Path, unit: str) -> dict:
    data, authors = run / "data" / unit, run / "elicit" / unit / "authors"
    meta, train, test = handed_split(run, unit)
    task = builtin_task(meta["task"], kind=meta["kind"])
    cfg = matched(meta["seed"], meta["n_test"])
    items = json.loads((authors / "items.json").read_text())
    learnt = load_file(str(authors / "learnt.safetensors"))
    t0 = time.perf_counter()
    ours = build_entry(lm, task, cfg, None, no_progress)
    build_s = time.perf_counter() - t0
    if ours.held_out != [r["input"] for r in json.loads((data / "valid.json").read_text())]:
        raise SystemExit(f"{unit}: build_entry's held-out queries are not the handed-over valid.json; rerun handover")
    again: Entry = build_entry(lm, task, replace(cfg, seed=cfg.seed + RESEED), None, no_progress)
    ours_all, again_all = every_block(lm, ours.prompts), every_block(lm, again.prompts)
    read_theirs = every_block(lm, items["icl_prompts"])  # their 10 prompts, read by ICL Lab
    theirs_all, theirs_layer = learnt["mean"], items["layer"]
    answering = Answering.of(lm, train)
    strength = cfg.strength
    methods = {"zero-shot": ZeroShotMethod(lm, answering),
               "ours": one_entry(lm, answering, ours.vector, ours.layer, strength),
               "ours reseeded": one_entry(lm, answering, again.vector, again.layer, strength),
               "ours at their block": one_entry(lm, answering, ours_all[theirs_layer], theirs_layer, strength),
               "theirs in ours": one_entry(lm, answering, theirs_all[theirs_layer], theirs_layer, strength)}
    hits = {name: item_hits(lm, m, test.inputs, test.outputs)["first-token"] for name, m in methods.items()}
    gold = [first_token_id(lm, y) for y in test.outputs]
    for side in ("elicit", "zero-shot", "few-shot"):
        hits[f"authors {side}"] = [i == g for i, g in zip(items["ids"][side], gold)]
    replayed = [p.first_token for p in methods["theirs in ours"].predict(test.inputs, batch_size=8)]
    sweep_ours, sweep_again = ours.sweep[:-1], again.sweep[:-1]
    sweep_theirs = torch.tensor(items["dev_accuracy_by_layer"])
    return {
        "unit": unit, "task": meta["task"], "seed": meta["seed"], "n": len(test.inputs), "hits": hits,
        "authors own score": {k: items[k] for k in ("elicit", "zero-shot", "few-shot")},
        "authors gold ids agree": sum(h == (i == g) for h, i, g in zip(items["elicit"], items["ids"]["elicit"], gold)),
        "n demos": {"ours": ours.prompts[0].count("\nOutput:") - 1, "theirs": items["settings"]["n_shots"]},
        "layer": {"ours": ours.layer, "ours reseeded": again.layer, "theirs": theirs_layer},
        "sweep": {"ours": sweep_ours.tolist(), "ours zero-shot": float(ours.sweep[-1]),
                  "theirs": sweep_theirs.tolist(),
                  "theirs zero-shot": sum(items["dev_zero_shot"]) / len(items["dev_zero_shot"]),
                  "ours reseeded": sweep_again.tolist()},
        "sweep agreement": agreement(sweep_ours, sweep_theirs),
        "sweep agreement, ours reseeded": agreement(sweep_ours, sweep_again),
        "blocks with the same sweep accuracy": int((sweep_ours == sweep_theirs).sum()),
        "cosine at our block": float(cosine(ours.vector, theirs_all[ours.layer])),
        "cosine at their block": float(cosine(ours_all[theirs_layer], theirs_all[theirs_layer])),
        "cosine by block": cosine(ours_all, theirs_all).tolist(),
        "cosine by block, ours reseeded": cosine(ours_all, again_all).tolist(),
        "their prompts read by ours": {
            "min cosine": float(cosine(read_theirs, theirs_all).min()),
            "max relative diff": float(((read_theirs - theirs_all).norm(dim=-1) / theirs_all.norm(dim=-1)).max())},
        "replayed items that agree": sum(a == b for a, b in zip(replayed, items["ids"]["elicit"])),
        "probe": probe_gap(lm, items["probe"]),
        "ours build_s": build_s,
    }


def summary(units: list[dict]) -> dict:
    """Accuracies and paired tests over the pooled items of `units` (one task's seeds, or all of them)."""
    pooled = {side: [h for u in units for h in u["hits"][side]] for side in units[0]["hits"]}
    n = len(pooled["ours"])

    def each(key: str) -> list:
        return [u[key] for u in units]

    return {
        "n": n, "first-token accuracy": {side: sum(h) / n for side, h in pooled.items()},
        "ours vs authors": paired(pooled["ours"], pooled["authors elicit"]),
        "ours vs ours reseeded": paired(pooled["ours"], pooled["ours reseeded"]),
        "ours at their block vs authors": paired(pooled["ours at their block"], pooled["authors elicit"]),
        "theirs in ours vs authors": paired(pooled["theirs in ours"], pooled["authors elicit"]),
        "zero-shot items that agree": sum(a == b for a, b in zip(pooled["zero-shot"], pooled["authors zero-shot"])),
        "replayed items that agree": sum(each("replayed items that agree")),
        "layers (ours, reseeded, theirs)": [list(u["layer"].values()) for u in units],
        "sweep spearman": [u["sweep agreement"]["spearman"] for u in units],
        "sweep spearman, ours reseeded": [u["sweep agreement, ours reseeded"]["spearman"] for u in units],
        "cosine at our block": each("cosine at our block"),
        "cosine at their block": each("cosine at their block"),
        "mean cosine over blocks": [sum(u["cosine by block"]) / len(u["cosine by block"]) for u in units],
        "mean cosine over blocks, ours reseeded": [sum(u["cosine by block, ours reseeded"]) /
                                                   len(u["cosine by block, ours reseeded"]) for u in units],
        "their prompts read by ours, min cosine": min(u["their prompts read by ours"]["min cosine"] for u in units),
    }


def table_row(task: str, s: dict) -> str:
    """docs/fidelity.md's row for one task's summary."""
    acc = s["first-token accuracy"]
    layers = "; ".join(f"{a}, {b} / {c}" for a, b, c in s["layers (ours, reseeded, theirs)"])
    return (accuracy_cells("ELICIT entry", task, s, acc, "authors elicit")
            + f"{acc['ours at their block']:.2f} | {acc['theirs in ours']:.2f} | {layers} | "
            f"{mean(s['sweep spearman']):.2f} / {mean(s['sweep spearman, ours reseeded']):.2f} | "
            f"{mean(s['cosine at our block']):.3f} / {mean(s['cosine at their block']):.3f} | "
            f"{mean(s['mean cosine over blocks']):.3f} / {mean(s['mean cosine over blocks, ours reseeded']):.3f} | "
            f"{s['replayed items that agree']}/{s['n']} |")


def described(u: dict) -> str:
    return (f"layers {u['layer']}, sweep {u['sweep agreement']}, cosine at our block "
            f"{u['cosine at our block']:.3f}, at theirs {u['cosine at their block']:.3f}, their prompts read by "
            f"ours {u['their prompts read by ours']}, replayed {u['replayed items that agree']}/{u['n']}, "
            f"probe {u['probe']}")


def main() -> None:
    ap, _ = handover_and_compare(__doc__.splitlines()[0], "sentiment-s0-elicit", "built-in task names", N_TEST)
    args = ap.parse_args()
    if args.command == "handover":
        handover(args.run, args.tasks, args.seeds, args.n_test, args.model)
    else:
        compare_and_report(args.run, "elicit", args.units, args.model, compare_unit, described, summary, table_row)


if __name__ == "__main__":
    main()
