"""ICL Lab's I2CL beside its authors' code on the handed-over splits: accuracy item by item, and what was learnt.

    PYTHONPATH=. python bench/parity/compare_i2cl.py handover --run $PARITY_RUN sentiment spam --seeds 0 1
    PYTHONPATH=. python bench/parity/compare_i2cl.py compare --run $PARITY_RUN sentiment-s0-i2cl ...

`handover` writes ICL Lab's seeded `eval` split of each task (the same `split` call as `evaluate`), loaded as a
classification task, under `data/<task>-s<seed>-i2cl/`: `train.json` the whole training part (ICL Lab's I2CL
draws both its demonstrations and its calibration examples from all of it; theirs draws its demonstrations from
its train split and calibrates on them), `valid.json` the same records (their 'validation' split, which their own
dataset classes also draw from the train split; only their 'deficient' choice of demonstrations reads it, not
the 'random' one their config uses), `test.json` the test items in order, `split.json` the arguments and the
labels in ICL Lab's order. The model checkpoint is handover.py's (written here too when missing).

`compare` takes each unit that i2cl_authors.py ran on (`i2cl/<unit>/authors`) and builds ICL Lab's I2CL on the same
split with the authors' settings (`MATCHED`), then these answer the same test items, all scored by ICL Lab
(the argmax over the labels' first tokens, which is also the authors' score): zero-shot, ours, ours built with
another seed (seed + 1000: other demonstrations, calibration examples, order and noise; the noise a rerun of ours
alone shows), and the authors' calibrated coefficients and context vectors loaded into our I2CL ("theirs in ours"),
which must answer as their code does item by item; and, for reference, ours with ICL Lab's own default settings
(`I2CLConfig()`: 12 epochs of batches of 4 on 16 examples, the labels' loss). Printed and written to
`i2cl/<unit>/compare.json` and `i2cl/summary.json`: accuracies, paired comparisons (`icr_app.stats.paired`: exact
McNemar), the agreement of the coefficients (Pearson / Spearman of the 2L λ and of the 2L β, ours against theirs and
against ours reseeded), the mean cosine of the context vectors, checks that both sides build byte-identical prompts
and demonstration texts, and the probe (same tokens and logits on one prompt).
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import torch
from compare_site import agreement, mean_cosine, probe_gap
from handover import classification_units
from safetensors.torch import load_file
from units import accuracy_cells, compared, handed_split, handover_and_compare, mean, report, unit_args

from icr_app.core.models import LoadedModel, load_model
from icr_app.core.tasks import Example
from icr_app.methods import build_method
from icr_app.methods.base import Answering, Method
from icr_app.methods.i2cl import I2CLConfig, I2CLMethod
from icr_app.methods.i2cl.artefact import MODULES, I2CLMeta, I2CLState
from icr_app.methods.i2cl.method import FirstTokenLoss, calibrate, context_vectors
from icr_app.methods.state import built_fields
from icr_app.methods.zero_shot import ZeroShotMethod
from icr_app.stats import paired

# The authors' configs/config_i2cl.py: 5 demonstrations per class; 100 epochs of AdamW (lr 0.01, weight decay
# 1e-3) on batches of 2, ⌊N/2⌋ steps an epoch over N calibration prompts; noise 0.001; the first answer token's
# cross-entropy over the vocabulary. They calibrate on the demonstrations themselves: ours draws as many
# (`calibration_examples`, set per task to 5 × the labels) from the same training part (see docs/fidelity.md).
MATCHED = I2CLConfig(demos_per_class=5, epochs=100, batch_size=2, lr=1e-2, weight_decay=1e-3, noise=1e-3,
                     loss="vocabulary")
THEIR_MODULES = {"mlp": "mlp", "attn": "attention"}  # their config['module'] names -> ours (artefact.MODULES)
RESEED = 1000


def to_ours(tensor: torch.Tensor, modules: list[str]) -> torch.Tensor:
    """(L, M, ...) with the modules in their config's order -> ICL Lab's order (attention, mlp)."""
    order = [[THEIR_MODULES[m] for m in modules].index(m) for m in MODULES]
    return tensor[:, order].contiguous()


def predicted(method: Method, inputs: list[str]) -> list[int]:
    """The index of the label each item is answered with."""
    return [method.labels.index(p.prediction) for p in method.predict(inputs, batch_size=8)]


def coef_agreement(a: torch.Tensor, b: torch.Tensor) -> dict[str, dict[str, float]]:
    """Correlation of the λ (context strengths) and, apart, of the β (query strengths), over layers and modules:
    pooled, the two groups' different levels (λ ≈ 0.1, β ≈ 1) alone would make any two sets correlate."""
    return {"lambda": agreement(a[..., 0], b[..., 0]), "beta": agreement(a[..., 1], b[..., 1])}


def coef_stats(coef: torch.Tensor) -> dict[str, float]:
    return {"lambda mean": float(coef[..., 0].mean()), "lambda std": float(coef[..., 0].std()),
            "beta mean": float(coef[..., 1].mean()), "beta std": float(coef[..., 1].std())}


def compare_unit(lm: LoadedModel, run: Path, unit: str) -> dict:
    authors = run / "i2cl" / unit / "authors"
    meta, train, test = handed_split(run, unit)
    answering = Answering.of(lm, train)
    items = json.loads((authors / "items.json").read_text())
    if list(answering.labels) != items["labels"]:
        raise SystemExit(f"{unit}: labels differ: ours {answering.labels}, theirs {items['labels']}")
    learnt = load_file(str(authors / "learnt.safetensors"))
    coef, vectors = to_ours(learnt["coef"], items["modules"]), to_ours(learnt["vectors"], items["modules"])
    config = replace(MATCHED, calibration_examples=MATCHED.demos_per_class * len(answering.labels))
    ours = build_method(lm, train, "i2cl", config, answering=answering, seed=meta["seed"])
    again = build_method(lm, train, "i2cl", config, answering=answering, seed=meta["seed"] + RESEED)
    theirs = I2CLMethod(lm, replace(ours.state, vectors=vectors, coef=coef))
    default = build_method(lm, train, "i2cl", answering=answering, seed=meta["seed"])  # ICL Lab's own settings
    methods = {"zero-shot": ZeroShotMethod(lm, answering), "ours": ours, "ours reseeded": again,
               "theirs in ours": theirs, "ours, default config": default}
    preds = {name: predicted(m, test.inputs) for name, m in methods.items()}
    gold = [answering.labels.index(y) for y in test.outputs]
    hits = {name: [p == g for p, g in zip(pred, gold)] for name, pred in preds.items()}
    for side in ("i2cl", "few-shot", "zero-shot"):
        hits[f"authors {side}"] = items[side]
    template = answering.template
    their_demos = [Example(r["input"], r["output"]) for r in items["demos"]["records"]]
    return {
        "unit": unit, "task": meta["task"], "seed": meta["seed"], "n": len(test.inputs), "hits": hits,
        "preds": preds | {"authors i2cl": items["pred"]["i2cl"], "authors zero-shot": items["pred"]["zero-shot"]},
        "theirs in ours items that agree": sum(a == b for a, b in zip(preds["theirs in ours"], items["pred"]["i2cl"])),
        "zero-shot items that agree": sum(a == b for a, b in zip(preds["zero-shot"], items["pred"]["zero-shot"])),
        "coef": coef_agreement(ours.state.coef, coef),
        "coef reseeded": coef_agreement(ours.state.coef, again.state.coef),
        "coef stats": {"ours": coef_stats(ours.state.coef), "ours reseeded": coef_stats(again.state.coef),
                       "theirs": coef_stats(coef)},
        "vector cosine": mean_cosine(ours.state.vectors, vectors),
        "vector cosine reseeded": mean_cosine(ours.state.vectors, again.state.vectors),
        "same prompts": items["prompts"] == [template.zero_shot(x) for x in test.inputs],
        "same demo texts": items["demos"]["texts"] == [template.demo(d) for d in their_demos],
        "ours build": {k: getattr(ours.state.meta, k) for k in
                       ("n_demos", "n_calibration", "steps", "loss", "zero_shot_loss", "init_loss",
                        "calibrated_loss", "build_s")},
        "authors time": items["time"],
        "probe": probe_gap(lm, items["probe"]),
    }


def on_their_demos(lm: LoadedModel, run: Path, unit: str) -> dict:
    """ICL Lab's I2CL pieces (`context_vectors`, `FirstTokenLoss`, `calibrate`, with `MATCHED`) on the authors'
    demonstrations, both averaged and calibrated on, as their pipeline does: what is left between the two codes
    once the data are the same is the implementation (tokenisation, padding, schedule, random draws)."""
    authors = run / "i2cl" / unit / "authors"
    meta, train, test = handed_split(run, unit)
    answering = Answering.of(lm, train)
    items = json.loads((authors / "items.json").read_text())
    learnt = load_file(str(authors / "learnt.safetensors"))
    coef, vectors = to_ours(learnt["coef"], items["modules"]), to_ours(learnt["vectors"], items["modules"])
    demos = [Example(r["input"], r["output"]) for r in items["demos"]["records"]]
    t0 = time.perf_counter()
    ours_vectors = context_vectors(lm, demos, answering.template)
    loss = FirstTokenLoss(lm, [answering.template.zero_shot(d.input) for d in demos], [d.output for d in demos], None)
    ours_coef, steps = calibrate(lm, ours_vectors, loss, MATCHED, meta["seed"])
    state = I2CLState(vectors=ours_vectors, coef=ours_coef, fingerprint=lm.fingerprint, meta=I2CLMeta(
        task=train.name, **built_fields(lm, answering), n_demos=len(demos), n_calibration=len(demos), steps=steps,
        loss="vocabulary", zero_shot_loss=float("nan"), init_loss=float("nan"),
        calibrated_loss=loss.mean(ours_vectors, ours_coef), build_s=time.perf_counter() - t0, seed=meta["seed"]))
    pred = predicted(I2CLMethod(lm, state), test.inputs)
    gold = [answering.labels.index(y) for y in test.outputs]
    return {"unit": unit, "task": meta["task"], "n": len(gold), "hits": [p == g for p, g in zip(pred, gold)],
            "authors hits": items["i2cl"], "pred": pred,
            "items that agree with theirs": sum(a == b for a, b in zip(pred, items["pred"]["i2cl"])),
            "coef": coef_agreement(ours_coef, coef), "coef stats": coef_stats(ours_coef),
            "vector cosine": mean_cosine(ours_vectors, vectors),
            "vector max abs diff": float((ours_vectors - vectors).abs().max()), "build_s": state.meta.build_s}


def summary(units: list[dict]) -> dict:
    """Accuracies and paired tests over the pooled items of `units` (one task's seeds, or all of them)."""
    pooled = {side: [h for u in units for h in u["hits"][side]] for side in units[0]["hits"]}
    n = len(pooled["ours"])

    def each(key: str, part: str, stat: str = "pearson") -> list[float]:
        return [u[key][part][stat] for u in units]

    return {
        "n": n, "accuracy": {side: sum(h) / n for side, h in pooled.items()},
        "ours vs authors": paired(pooled["ours"], pooled["authors i2cl"]),
        "ours vs ours reseeded": paired(pooled["ours"], pooled["ours reseeded"]),
        "theirs in ours vs authors": paired(pooled["theirs in ours"], pooled["authors i2cl"]),
        "theirs in ours items that agree": sum(u["theirs in ours items that agree"] for u in units),
        "zero-shot items that agree": sum(u["zero-shot items that agree"] for u in units),
        "lambda pearson": each("coef", "lambda"), "beta pearson": each("coef", "beta"),
        "lambda spearman": each("coef", "lambda", "spearman"), "beta spearman": each("coef", "beta", "spearman"),
        "lambda pearson, ours reseeded": each("coef reseeded", "lambda"),
        "beta pearson, ours reseeded": each("coef reseeded", "beta"),
        "vector cosine": [u["vector cosine"] for u in units],
        "vector cosine, ours reseeded": [u["vector cosine reseeded"] for u in units],
        "same prompts and demos": all(u["same prompts"] and u["same demo texts"] for u in units),
    }


HEADER = ("| method | task | n | zero-shot | ours | theirs | p | ours, reseeded | λ r / β r, ours vs theirs | "
          "λ r / β r, ours vs ours reseeded | vectors cos, vs theirs / vs reseeded | theirs in ours | "
          "ours, default config |\n" + "| --- " * 13 + "|")


def table_row(task: str, s: dict) -> str:
    """docs/fidelity.md's row for one task's summary (columns: HEADER)."""
    acc = s["accuracy"]
    return (accuracy_cells("I2CL", task, s, acc, "authors i2cl")
            + f"{mean(s['lambda pearson']):.2f} / {mean(s['beta pearson']):.2f} | "
            f"{mean(s['lambda pearson, ours reseeded']):.2f} / {mean(s['beta pearson, ours reseeded']):.2f} | "
            f"{mean(s['vector cosine']):.3f} / {mean(s['vector cosine, ours reseeded']):.3f} | "
            f"{s['theirs in ours items that agree']}/{s['n']} | {acc['ours, default config']:.2f} |")


def compare(run: Path, units: list[str], model: str) -> None:
    lm = load_model(model)

    def describe(u: dict) -> str:
        return (f"λ {u['coef']['lambda']}, β {u['coef']['beta']} (reseeded λ {u['coef reseeded']['lambda']}, "
                f"β {u['coef reseeded']['beta']}), vectors cos {u['vector cosine']:.3f} "
                f"(reseeded {u['vector cosine reseeded']:.3f}), theirs in ours {u['theirs in ours items that agree']}"
                f"/{u['n']}, prompts {u['same prompts']}, demos {u['same demo texts']}, probe {u['probe']}")

    done = compared(run, "i2cl", units, lambda unit: compare_unit(lm, run, unit), describe)
    print(HEADER)
    report(run, "i2cl", done, summary, table_row)


def their_demos(run: Path, units: list[str], model: str) -> None:
    lm = load_model(model)

    def describe(u: dict) -> str:
        return (f"ours on their demos {sum(u['hits'])}/{u['n']}, theirs {sum(u['authors hits'])}/{u['n']}, "
                f"items that agree {u['items that agree with theirs']}, λ {u['coef']['lambda']}, "
                f"β {u['coef']['beta']}, vectors cos {u['vector cosine']:.6f} (max |Δ| {u['vector max abs diff']:.2e})")

    done = compared(run, "i2cl", units, lambda unit: on_their_demos(lm, run, unit), describe, "their-demos.json")
    n = sum(u["n"] for u in done)
    report = {"n": n, "accuracy": sum(sum(u["hits"]) for u in done) / n,
              "authors accuracy": sum(sum(u["authors hits"]) for u in done) / n,
              "items that agree with theirs": sum(u["items that agree with theirs"] for u in done),
              "ours on their demos vs authors": paired([h for u in done for h in u["hits"]],
                                                       [h for u in done for h in u["authors hits"]]),
              "lambda pearson": [u["coef"]["lambda"]["pearson"] for u in done],
              "beta pearson": [u["coef"]["beta"]["pearson"] for u in done],
              "vector cosine": [u["vector cosine"] for u in done]}
    print(json.dumps(report, indent=1))
    (run / "i2cl" / "their-demos-summary.json").write_text(json.dumps(report, indent=1))


def main() -> None:
    ap, sub = handover_and_compare(__doc__.splitlines()[0], "sentiment-s0-i2cl", "built-in classification task names")
    unit_args(sub.add_parser("their-demos", help="ours calibrated on the authors' own demonstrations, as theirs is"),
              "sentiment-s0-i2cl")
    args = ap.parse_args()
    if args.command == "handover":
        classification_units(args.run, args.tasks, args.seeds, args.n_test, args.model, "i2cl",
                             "I2CL's authors' code")
    elif args.command == "compare":
        compare(args.run, args.units, args.model)
    else:
        their_demos(args.run, args.units, args.model)


if __name__ == "__main__":
    main()
