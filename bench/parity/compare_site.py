"""ICL Lab's SITE beside its authors' code on the handed-over splits: accuracy item by item, and what was learnt.

    PYTHONPATH=. python bench/parity/compare_site.py --run $PARITY_RUN sentiment-s0 sentiment-s1 ...

Each unit is a folder handover.py wrote (`data/<unit>`) that site_authors.py ran on (`site/<unit>/authors`).
ICL Lab's SITE is built on the same split with the authors' settings (`MATCHED`, with the number of steps their
run took), and four things answer the same test items, all scored by ICL Lab: zero-shot, our SITE, the authors'
learnt task embedding and head weights loaded into our SITE ("theirs in ours"), and our SITE built with another
seed (other prompts, training order and fit/validation cut: the noise a rerun of ours alone shows). Two scores
per item: the authors' (the first answer token is the vocabulary's argmax) and ours (greedy answer, prefix exact
match). Printed and written to `site/<unit>/compare.json` (`compare-last.json` with --keep-last): accuracies,
paired comparisons (`icr_app.stats.paired`: exact McNemar), the correlation of the head weights α (Pearson,
Spearman over the L·H heads), the mean cosine of the task embeddings, and a check that both sides run the same
model on the same text (a probe prompt's logits).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import torch
from safetensors.torch import load_file
from scipy.stats import pearsonr, spearmanr
from units import accuracy_cells, compared, handed_split, mean, report, unit_args

from icr_app.core.models import LoadedModel, load_model
from icr_app.core.scoring import exact_match, first_token_id
from icr_app.methods import build_method
from icr_app.methods.base import Answering, Method
from icr_app.methods.site.method import SiteConfig, SiteMethod
from icr_app.methods.zero_shot import ZeroShotMethod
from icr_app.stats import paired

# The authors' script (eval_scripts/eval_site.sh): M=50 prompts of N=10 shots, 400 steps of batch 1, lr 0.2, the
# first token's cross-entropy over the vocabulary; they validate every 50 steps and never stop early.
MATCHED = SiteConfig(n_prompts=50, n_demos=10, steps=400, batch_size=1, lr=0.2, eval_every=50, patience=8,
                     objective="first-token")
SIDES = ("zero-shot", "ours", "ours reseeded", "theirs in ours")
RESEED = 1000  # "ours reseeded": our SITE built again with seed + RESEED, the yardstick of seed-to-seed noise


def agreement(a: torch.Tensor, b: torch.Tensor) -> dict[str, float]:
    """Pearson and Spearman correlation of two equally shaped tensors, element by element."""
    x, y = a.flatten().double().numpy(), b.flatten().double().numpy()
    return {"pearson": float(pearsonr(x, y)[0]), "spearman": float(spearmanr(x, y)[0])}


def mean_cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    """Mean over heads of the cosine between two (L, H, d) task embeddings."""
    return float(torch.nn.functional.cosine_similarity(a.double(), b.double(), dim=-1).mean())


def item_hits(lm: LoadedModel, method: Method, inputs: list[str], targets: list[str]) -> dict[str, list[bool]]:
    """Per item: the first generated token is the answer's first token (the authors' score), and the answer
    matches (ours)."""
    preds = method.predict(inputs, batch_size=8)
    return {"first-token": [p.first_token == first_token_id(lm, y) for p, y in zip(preds, targets)],
            "exact": [exact_match(p.generated, y) for p, y in zip(preds, targets)]}


def probe_gap(lm: LoadedModel, probe: dict) -> dict:
    """The authors' probe prompt run here: same tokens, same top-5 ids, the largest logit difference."""
    enc = lm.tokenizer(probe["prompt"], return_tensors="pt")
    with torch.no_grad(), lm.lock:
        logits = lm.model(**enc.to(lm.device)).logits[0, -1].float().cpu()
    return {"same_tokens": enc.input_ids[0].tolist() == probe["input_ids"],
            "same_top5": logits.topk(5).indices.tolist() == probe["ids"],
            "max_logit_diff": float((logits[probe["ids"]] - torch.tensor(probe["logits"])).abs().max())}


def compare_unit(lm: LoadedModel, run: Path, unit: str, keep_last: bool = False) -> dict:
    """One unit's comparison; `keep_last`: ours validates only after its last step, so it keeps the final α
    unless that is worse than the start (what the authors' code keeps in effect, see docs/fidelity.md)."""
    authors = run / "site" / unit / "authors"
    meta, train, test = handed_split(run, unit)
    answering = Answering.of(lm, train)
    items = json.loads((authors / "items.json").read_text())
    steps = items["settings"]["epoch"]
    config = replace(MATCHED, steps=steps, eval_every=steps if keep_last else MATCHED.eval_every)
    ours = build_method(lm, train, "site", config, answering=answering, seed=meta["seed"])
    again = build_method(lm, train, "site", config, answering=answering, seed=meta["seed"] + RESEED)
    learnt = load_file(str(authors / "learnt.safetensors"))
    theta = torch.logit(learnt["alpha"].clamp(1e-6, 1 - 1e-6))  # α of exactly 0 or 1 keeps a finite logit
    theirs = SiteMethod(lm, replace(ours.state, t=learnt["t"], theta=theta))
    methods = {"zero-shot": ZeroShotMethod(lm, answering), "ours": ours, "ours reseeded": again,
               "theirs in ours": theirs}
    hits = {name: item_hits(lm, m, test.inputs, test.outputs) for name, m in methods.items()}
    return {
        "unit": unit, "task": meta["task"], "seed": meta["seed"], "n": len(test.inputs),
        "hits": hits, "authors": {"zero-shot": items["zero-shot"], "site": items["site"]},
        "alpha": agreement(ours.state.alpha, learnt["alpha"]), "t_cosine": mean_cosine(ours.state.t, learnt["t"]),
        "alpha_reseeded": agreement(ours.state.alpha, again.state.alpha),
        "t_cosine_reseeded": mean_cosine(ours.state.t, again.state.t),
        "alpha_mean": {"ours": float(ours.state.alpha.mean()), "theirs": float(learnt["alpha"].mean())},
        "ours_build": {"steps": ours.state.meta.steps, "best_step": ours.state.meta.best_step},
        "probe": probe_gap(lm, items["probe"]),
    }


def summary(units: list[dict]) -> dict:
    """Accuracies and paired tests over the pooled items of `units` (one task's seeds, or all of them)."""
    def pooled(side: str, score: str) -> list[bool]:
        return [h for u in units for h in (u["authors"][side] if score == "authors" else u["hits"][side][score])]

    first = {name: pooled(name, "first-token") for name in SIDES}
    first["authors"] = pooled("site", "authors")
    first["authors zero-shot"] = pooled("zero-shot", "authors")
    acc = {name: sum(h) / len(h) for name, h in first.items()}
    return {
        "n": len(first["ours"]), "first-token accuracy": acc,
        "exact accuracy": {name: sum(pooled(name, "exact")) / len(first["ours"]) for name in SIDES},
        "ours vs authors": paired(first["ours"], first["authors"]),
        "ours vs ours reseeded": paired(first["ours"], first["ours reseeded"]),
        "theirs in ours vs authors": paired(first["theirs in ours"], first["authors"]),
        "zero-shot items that agree": sum(a == b for a, b in zip(first["zero-shot"], first["authors zero-shot"])),
        "theirs in ours items that agree": sum(a == b for a, b in zip(first["theirs in ours"], first["authors"])),
        "alpha pearson": [u["alpha"]["pearson"] for u in units],
        "alpha spearman": [u["alpha"]["spearman"] for u in units],
        "alpha pearson, ours reseeded": [u["alpha_reseeded"]["pearson"] for u in units],
        "alpha spearman, ours reseeded": [u["alpha_reseeded"]["spearman"] for u in units],
    }


def table_row(task: str, s: dict) -> str:
    """docs/fidelity.md's row for one task's summary: first-token accuracies, the paired p, α agreement (and the
    reseeded yardstick), how many items their α in our SITE scores as their code does."""
    acc = s["first-token accuracy"]
    return (accuracy_cells("SITE", task, s, acc, "authors")
            + f"{mean(s['alpha pearson']):.2f} / {mean(s['alpha spearman']):.2f} | "
            f"{mean(s['alpha pearson, ours reseeded']):.2f} / {mean(s['alpha spearman, ours reseeded']):.2f} | "
            f"{s['theirs in ours items that agree']}/{s['n']} |")


def main() -> None:
    ap = unit_args(argparse.ArgumentParser(description=__doc__.splitlines()[0]), "sentiment-s0")
    ap.add_argument("--keep-last", action="store_true",
                    help="ours keeps its final α as the authors' code does, not the best validated one")
    args = ap.parse_args()
    lm = load_model(args.model)
    suffix = "-last" if args.keep_last else ""

    def describe(u: dict) -> str:
        return (f"alpha pearson {u['alpha']['pearson']:.3f} spearman {u['alpha']['spearman']:.3f} "
                f"(ours reseeded: {u['alpha_reseeded']['pearson']:.3f}, {u['alpha_reseeded']['spearman']:.3f}), "
                f"t cosine {u['t_cosine']:.3f} (reseeded {u['t_cosine_reseeded']:.3f}), probe {u['probe']}")

    units = compared(args.run, "site", args.units, lambda unit: compare_unit(lm, args.run, unit, args.keep_last),
                     describe, f"compare{suffix}.json")
    report(args.run, "site", units, summary, table_row, f"summary{suffix}.json")

if __name__ == "__main__":
    main()
