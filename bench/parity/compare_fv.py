"""ICL Lab's function vector beside its authors' code on the handed-over splits: accuracy item by item, and the heads.

    PYTHONPATH=. python bench/parity/compare_fv.py --run $PARITY_RUN sentiment-s0-fv antonyms-s0-fv ...

Each unit is a folder handover.py wrote with `--method function-vector` (`data/<unit>`) that fv_authors.py ran on
(`fv/<unit>/authors`). ICL Lab's function vector is built on the same split with the settings their run used
(`matched`: 10 shots, their numbers of clean and corrupted prompts, the same top k and edit layer), and these
answer the same test items, scored by ICL Lab's first-token rule (the first generated token is the answer's
first token; for the authors' side, the argmax id their run kept): zero-shot, ours, ours built with another seed
(other prompts: the noise a rerun of ours alone shows), and the authors' vector added by ICL Lab at their layer
("theirs in ours"), which must give the token their code gave ("replayed"). What the two learn: the overlap of
the top-10 heads and the Pearson correlation of the two AIE maps over the L·H heads, ours against theirs and
ours against ours reseeded, and on a task of few answers (sentiment) the same with each answer weighted equally
(`by_label`). Per item also the rank and log-probability of the answer's first token (`gold_scores`), finer than
the hit where few items hit. The mechanics: ICL Lab's `mean_head_outputs` on their clean prompts against their
mean activations, ICL Lab's `indirect_effects` on their corrupted prompts (with their means) against their
indirect effects, and the probe (ICL Lab's template rebuilds their prompt to the byte; same ids, same logits).
Printed and written to `fv/<unit>/compare.json`.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import torch
from compare_site import agreement, item_hits, probe_gap
from safetensors.torch import load_file
from units import accuracy_cells, compared, handed_split, mean, report, unit_args

from icr_app.core.models import LoadedModel, load_model
from icr_app.core.prompts import Template
from icr_app.core.scoring import first_token_id
from icr_app.core.tasks import Example, sample_icl_prompts
from icr_app.methods import build_method
from icr_app.methods.base import Answering, Method
from icr_app.methods.function_vector import (
    FunctionVectorConfig,
    FunctionVectorMethod,
    indirect_effects,
    mean_head_outputs,
    shuffled_label_prompts,
    top_heads,
)
from icr_app.methods.zero_shot import ZeroShotMethod
from icr_app.stats import paired

SIDES = ("zero-shot", "ours", "ours reseeded", "theirs in ours")
RESEED = 1000  # "ours reseeded": our function vector built again with seed + RESEED (its own prompts)
TOP = 10  # the heads compared


def matched(settings: dict) -> FunctionVectorConfig:
    """ICL Lab's config at the settings of the authors' run (fv_authors.py's defaults are ICL Lab's own)."""
    return FunctionVectorConfig(n_prompts=settings["n_clean"], n_corrupted=settings["n_trials"],
                                n_demos=settings["n_shots"], top_k=settings["top_k"], layer=settings["layer"])


def overlap(a: torch.Tensor, b: torch.Tensor, k: int = TOP) -> int:
    """How many of the k heads with the largest AIE in `a` are among those of `b`."""
    return len(set(top_heads(a, k)) & set(top_heads(b, k)))


def theirs_in_ours(ours: FunctionVectorMethod, fv: torch.Tensor, layer: int) -> FunctionVectorMethod:
    """Our function vector with the authors' vector and layer (our AIE map is kept, and unused when answering)."""
    meta = replace(ours.state.meta, layer=layer)
    return FunctionVectorMethod(ours.lm, replace(ours.state, fv=fv.float(), meta=meta))


def their_mechanics(lm: LoadedModel, method: Method, items: dict, learnt: dict) -> dict:
    """Their clean prompts read by ICL Lab, and their corrupted prompts' indirect effects recomputed by ICL Lab."""
    clean, corrupted = items["prompts"]["clean"], items["prompts"]["corrupted"]
    means = mean_head_outputs(lm, [p["prompt"] for p in clean])
    theirs = learnt["mean_last"]
    rel = (means - theirs).norm(dim=-1) / theirs.norm(dim=-1).clamp_min(1e-12)
    golds = [p["target"][1:] for p in corrupted]  # their answers carry the leading space of prepend_space
    ie = indirect_effects(lm, method, [p["prompt"] for p in corrupted], golds, theirs)
    return {"last labels": sorted({p["last_label"] for p in clean + corrupted}),
            "mean activations max relative diff": float(rel.max()),
            "aie max abs diff": float((ie - learnt["aie"]).abs().max()),
            "aie pearson": agreement(ie, learnt["aie"])["pearson"]}


def per_prompt(lm: LoadedModel, method: Method, prompts: list[str], golds: list[str], means: torch.Tensor,
               ) -> torch.Tensor:
    """(P, L, H): each corrupted prompt's own indirect effects (ICL Lab's `indirect_effects`, one prompt at a time)."""
    return torch.stack([indirect_effects(lm, method, [p], [g], means) for p, g in zip(prompts, golds)])


def our_trials(lm: LoadedModel, method: Method, train, cfg: FunctionVectorConfig, seed: int,
               ) -> tuple[torch.Tensor, list[str]]:
    """Our build's corrupted prompts' indirect effects one by one, and their golds (the build's own draws)."""
    means = mean_head_outputs(lm, sample_icl_prompts(train, method.template, cfg.n_prompts, cfg.n_demos, seed))
    prompts, golds = shuffled_label_prompts(train, method.template, cfg.n_corrupted, cfg.n_demos, seed)
    return per_prompt(lm, method, prompts, golds, means), golds


def balanced(effects: torch.Tensor, golds: list[str]) -> torch.Tensor:
    """The AIE map with each gold answer weighted equally: the mean over golds of the mean over its prompts."""
    return torch.stack([effects[[i for i, g in enumerate(golds) if g == y]].mean(0) for y in dict.fromkeys(golds)]
                       ).mean(0)


def by_label(lm: LoadedModel, method: Method, train, cfg: FunctionVectorConfig, seed: int, items: dict,
             learnt: dict, ours_aie: torch.Tensor) -> dict | None:
    """On a task of few answers (sentiment), a head's effect follows the query's answer (it raises ` positive`,
    so it helps on positive queries and hurts on negative ones), and a mean over a few corrupted prompts follows
    their mix of answers. The AIE maps weighted to balance the answers, ours / ours reseeded / theirs, and their
    Pearson correlations; None on a task whose answers hardly repeat."""
    if len(set(train.outputs)) > len(train.outputs) // 4:
        return None
    ours, golds = our_trials(lm, method, train, cfg, seed)
    again, golds_again = our_trials(lm, method, train, cfg, seed + RESEED)
    theirs_golds = [p["target"][1:] for p in items["prompts"]["corrupted"]]
    maps = {"ours": balanced(ours, golds), "ours reseeded": balanced(again, golds_again),
            "theirs": balanced(learnt["indirect_effects"], theirs_golds)}
    return {"golds": {"ours": golds, "ours reseeded": golds_again, "theirs": theirs_golds},
            "ours per-prompt mean = ours' AIE, max abs diff": float((ours.mean(0) - ours_aie).abs().max()),
            "pearson": agreement(maps["ours"], maps["theirs"])["pearson"],
            "pearson, ours reseeded": agreement(maps["ours"], maps["ours reseeded"])["pearson"],
            "top-10 overlap": overlap(maps["ours"], maps["theirs"]),
            "top-10 overlap, ours reseeded": overlap(maps["ours"], maps["ours reseeded"])}


@torch.no_grad()
def gold_scores(lm: LoadedModel, method: Method, inputs: list[str], outputs: list[str]) -> dict[str, list[float]]:
    """Per item: the rank (0 = the argmax) and log-probability over the vocabulary of the answer's first token at
    the answer position, one item at a time, as `method` prefills it: a finer reading than the hit when few hit."""
    ranks, logps = [], []
    for x, y in zip(inputs, outputs):
        enc = lm.tokenizer(method.prompt(x), return_tensors="pt").to(lm.device)
        with lm.lock, method.intervention([x]):
            logits = lm.model(**enc).logits[0, -1].float().cpu()
        gold = first_token_id(lm, y)
        ranks.append(int((logits > logits[gold]).sum()))
        logps.append(float(logits.log_softmax(-1)[gold]))
    return {"rank": ranks, "logp": logps}


def queries_among_demos(items: dict) -> list[int]:
    """Of their prompts (clean, corrupted), how many had the query among their own demonstrations: the query's
    `Input: x\nOutput:` is also the start of a demonstration (ours never draws such a prompt)."""
    prefix = items["settings"]["prefixes"]["input"]

    def among(prompt: str) -> bool:
        return prompt.count(prompt[prompt.rindex(prefix):]) > 1

    return [sum(among(p["prompt"]) for p in items["prompts"][kind]) for kind in ("clean", "corrupted")]


def compare_unit(lm: LoadedModel, run: Path, unit: str) -> dict:
    authors = run / "fv" / unit / "authors"
    meta, train, test = handed_split(run, unit)
    answering = Answering.of(lm, train)
    items = json.loads((authors / "items.json").read_text())
    learnt = load_file(str(authors / "learnt.safetensors"))
    cfg = matched(items["settings"])
    t0 = time.perf_counter()
    ours = build_method(lm, train, "function-vector", cfg, answering=answering, seed=meta["seed"])
    build_s = time.perf_counter() - t0
    again = build_method(lm, train, "function-vector", cfg, answering=answering, seed=meta["seed"] + RESEED)
    methods = {"zero-shot": ZeroShotMethod(lm, answering), "ours": ours, "ours reseeded": again,
               "theirs in ours": theirs_in_ours(ours, learnt["fv"], items["layer"])}
    hits = {name: item_hits(lm, m, test.inputs, test.outputs)["first-token"] for name, m in methods.items()}
    scores = {name: gold_scores(lm, m, test.inputs, test.outputs) for name, m in methods.items()}
    gold = [first_token_id(lm, y) for y in test.outputs]
    for side in ("fv", "zero-shot"):
        hits[f"authors {side}"] = [i == g for i, g in zip(items["ids"][side], gold)]
    replayed = [p.first_token for p in methods["theirs in ours"].predict(test.inputs, batch_size=8)]
    probe = items["probe"]
    rebuilt = Template().few_shot([Example(d["input"], d["output"]) for d in probe["demos"]], probe["query"])
    theirs_aie, ours_aie, again_aie = learnt["aie"], ours.state.aie, again.state.aie
    their_heads = [(h[0], h[1]) for h in items["top_heads"]]
    return {
        "unit": unit, "task": meta["task"], "seed": meta["seed"], "n": len(test.inputs), "hits": hits,
        "gold scores": scores,
        "authors own score": {k: items[k] for k in ("fv", "zero-shot")},
        "authors gold ids agree": sum(h == (i == g) for h, i, g in zip(items["fv"], items["ids"]["fv"], gold)),
        "settings": items["settings"], "layer": {"ours": ours.state.meta.layer, "theirs": items["layer"]},
        "their queries among their demonstrations (clean, corrupted)": queries_among_demos(items),
        "top heads": {"ours": top_heads(ours_aie, cfg.top_k), "ours reseeded": top_heads(again_aie, cfg.top_k),
                      "theirs": their_heads, "theirs from the map": top_heads(theirs_aie, cfg.top_k)},
        "top-10 overlap": overlap(ours_aie, theirs_aie), "top-10 overlap, ours reseeded": overlap(ours_aie, again_aie),
        "top-k overlap": overlap(ours_aie, theirs_aie, cfg.top_k),
        "top-k overlap, ours reseeded": overlap(ours_aie, again_aie, cfg.top_k),
        "aie": agreement(ours_aie, theirs_aie), "aie, ours reseeded": agreement(ours_aie, again_aie),
        "fv cosine": float(torch.nn.functional.cosine_similarity(ours.state.fv.double(), learnt["fv"].double(), dim=0)),
        "fv cosine, ours reseeded": float(torch.nn.functional.cosine_similarity(
            ours.state.fv.double(), again.state.fv.double(), dim=0)),
        "their mechanics": their_mechanics(lm, Method(lm, answering), items, learnt),
        "aie, answers balanced": by_label(lm, Method(lm, answering), train, cfg, meta["seed"], items, learnt, ours_aie),
        "replayed items that agree": sum(a == b for a, b in zip(replayed, items["ids"]["fv"])),
        "probe": probe_gap(lm, probe) | {"same_text": rebuilt == probe["prompt"]},
        "seconds": {"ours build": build_s, "authors": items["seconds"]},
    }


def summary(units: list[dict]) -> dict:
    """Accuracies and paired tests over the pooled items of `units` (one task's seeds, or all of them)."""
    pooled = {side: [h for u in units for h in u["hits"][side]] for side in units[0]["hits"]}
    n = len(pooled["ours"])

    def each(key: str) -> list:
        return [u[key] for u in units]

    ranks = {side: [r for u in units for r in u["gold scores"][side]["rank"]] for side in SIDES}
    logps = {side: [v for u in units for v in u["gold scores"][side]["logp"]] for side in SIDES}
    return {
        "n": n, "first-token accuracy": {side: sum(h) / n for side, h in pooled.items()},
        "gold rank, median": {side: float(torch.tensor(r).float().median()) for side, r in ranks.items()},
        "gold log-prob, mean": {side: sum(v) / n for side, v in logps.items()},
        "gold log-prob, ours vs theirs in ours": agreement(torch.tensor(logps["ours"]),
                                                           torch.tensor(logps["theirs in ours"])),
        "gold log-prob, ours vs ours reseeded": agreement(torch.tensor(logps["ours"]),
                                                          torch.tensor(logps["ours reseeded"])),
        "ours vs authors": paired(pooled["ours"], pooled["authors fv"]),
        "ours vs ours reseeded": paired(pooled["ours"], pooled["ours reseeded"]),
        "theirs in ours vs authors": paired(pooled["theirs in ours"], pooled["authors fv"]),
        "zero-shot items that agree": sum(a == b for a, b in zip(pooled["zero-shot"], pooled["authors zero-shot"])),
        "replayed items that agree": sum(each("replayed items that agree")),
        "top-10 overlap": each("top-10 overlap"),
        "top-10 overlap, ours reseeded": each("top-10 overlap, ours reseeded"),
        "aie pearson": [u["aie"]["pearson"] for u in units],
        "aie pearson, ours reseeded": [u["aie, ours reseeded"]["pearson"] for u in units],
        "their aie recomputed by ours, pearson": [u["their mechanics"]["aie pearson"] for u in units],
        "fv cosine": each("fv cosine"), "fv cosine, ours reseeded": each("fv cosine, ours reseeded"),
        "aie pearson, answers balanced": [u["aie, answers balanced"]["pearson"] for u in units
                                          if u["aie, answers balanced"]],
        "aie pearson, answers balanced, ours reseeded": [u["aie, answers balanced"]["pearson, ours reseeded"]
                                                         for u in units if u["aie, answers balanced"]],
    }


def table_row(task: str, s: dict) -> str:
    """docs/fidelity.md's row for one task's summary."""
    acc = s["first-token accuracy"]
    return (accuracy_cells("function vector", task, s, acc, "authors fv")
            + f"{mean(s['top-10 overlap']):.1f} ({mean(s['top-10 overlap, ours reseeded']):.1f}) / {TOP} | "
            f"{mean(s['aie pearson']):.2f} ({mean(s['aie pearson, ours reseeded']):.2f}) | "
            f"{mean(s['fv cosine']):.3f} ({mean(s['fv cosine, ours reseeded']):.3f}) | "
            f"{s['replayed items that agree']}/{s['n']} |")


def main() -> None:
    ap = unit_args(argparse.ArgumentParser(description=__doc__.splitlines()[0]), "sentiment-s0-fv")
    args = ap.parse_args()
    lm = load_model(args.model)

    def describe(u: dict) -> str:
        return (f"top-10 overlap {u['top-10 overlap']} (reseeded {u['top-10 overlap, ours reseeded']}), aie "
                f"{u['aie']} (reseeded {u['aie, ours reseeded']}), answers balanced {u['aie, answers balanced']}, "
                f"their mechanics {u['their mechanics']}, their queries among their demonstrations (clean, "
                f"corrupted) {u['their queries among their demonstrations (clean, corrupted)']}, "
                f"replayed {u['replayed items that agree']}/{u['n']}, probe {u['probe']}")

    units = compared(args.run, "fv", args.units, lambda unit: compare_unit(lm, args.run, unit), describe)
    report(args.run, "fv", units, summary, table_row)


if __name__ == "__main__":
    main()
