"""The methods trained once and reused (ICR, ELICIT, ATV) by the ICR paper's protocol: a router, an ELICIT library
and an ATV generator learnt from the five in-domain sets only, scored on the seven out-of-domain sets of the
`icr-paper` group, beside the shipped router, library and generator (13 other domains) and beside a router with a
random orthonormal basis of the same rank in place of the PIDs (the paper's ablation).

    PYTHONPATH=. python bench/icr_protocol.py --model smollm2-135m --out runs/icr-protocol --seeds 0,1,2

Both routers are trained with the shipped recipe (`TrainConfig`'s defaults, the MANIFEST's flags) and one seed,
where the shipped router is an ensemble of five; training resumes from OUT. The library is built with
`LibraryConfig`'s defaults (the paper's settings, as the shipped library), each entry in its set's own prompt; the
generator with the shipped generators' recipe (`GENERATOR`), each domain in its own prompt.
Each variant then runs in a suite of its own over the whole group with zero-shot beside it, so every suite scores
the same test items (the seed draws them) and the variants pair item by item. The out-of-domain sets are for
reporting only: nothing here is chosen on them.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import icr_app as icl
from icr_app.core.tasks import HF_PREFIX, load_task
from icr_app.core.taskspecs import load_group
from icr_app.methods.atv.generator import FILE as GENERATOR_FILE
from icr_app.methods.atv.generator import GeneratorConfig, build_generator
from icr_app.methods.atv.method import AtvConfig
from icr_app.methods.elicit.library import FILE, build_library
from icr_app.methods.elicit.method import ElicitConfig
from icr_app.methods.icr.method import ICRConfig
from icr_app.methods.icr.train import TrainConfig, train_router
from icr_app.stats import paired, significant
from icr_app.suite_report import item_names, vs_base

GROUP = "icr-paper"
# variant: the methods its suite scores beside zero-shot, and what it learns from the in-domain sets (None: the
# artefacts shipped with the model)
VARIANTS = {"shipped": (("icr", "elicit", "atv"), None), "paper-protocol": (("icr",), "pids"),
            "random-basis": (("icr",), "random"), "elicit-protocol": (("elicit",), "library"),
            "atv-protocol": (("atv",), "generator")}
ROWS = {("shipped", "icr"): "ICR, shipped router", ("shipped", "elicit"): "ELICIT, shipped library",
        ("shipped", "atv"): "ATV, shipped generator", ("paper-protocol", "icr"): "ICR, paper-protocol router",
        ("random-basis", "icr"): "ICR, random basis", ("elicit-protocol", "elicit"): "ELICIT, paper-protocol library",
        ("atv-protocol", "atv"): "ATV, paper-protocol generator"}
PAIRS = ((("elicit-protocol", "elicit"), ("paper-protocol", "icr")), (("shipped", "elicit"), ("shipped", "icr")),
         (("paper-protocol", "icr"), ("random-basis", "icr")), (("paper-protocol", "icr"), ("shipped", "icr")),
         (("atv-protocol", "atv"), ("paper-protocol", "icr")), (("atv-protocol", "atv"), ("elicit-protocol", "elicit")),
         (("shipped", "atv"), ("shipped", "elicit")))
# the shipped generators' recipe (icr_app/assets/atv/*/MANIFEST.md), fewer steps and examples than the defaults
GENERATOR = GeneratorConfig(per_domain=24, val_size=8, steps=300)


def in_domain() -> list:
    return [load_task(HF_PREFIX + name) for name in load_group(GROUP).parts["in-domain"]]


# where each variant's artefact is written under OUT, by what it learns
ARTEFACTS = {"pids": "router-pids", "random": "router-random", "library": f"elicit-library/{FILE}",
             "generator": f"atv-generator/{GENERATOR_FILE}"}


def learn(lm, learns: str, out: Path, args, progress) -> None:
    """Learn `learns` from the in-domain sets into its place under `out`, unless it is there (training resumes)."""
    path = out / ARTEFACTS[learns]
    if learns == "library" and not path.exists():
        library = build_library(lm, in_domain(), progress=progress)
        library.save(path, lm.fingerprint)
        print(f"library built in {library.info['build_s']:.0f} s; held-out top-1 {library.info['held_out_top1']:.2f}")
    elif learns == "generator" and not path.exists():
        generator = build_generator(lm, in_domain(), GENERATOR, progress=progress)
        generator.save(path)
        print(f"generator trained in {generator.meta.build_s:.0f} s; mean held-out loss "
              f"{generator.meta.val_loss[0]:.3f} untrained, {min(generator.meta.val_loss):.3f} kept")
    elif learns in ("pids", "random") and not (path / "router.safetensors").exists():
        cfg = TrainConfig(basis=learns, examples_per_domain=args.examples_per_domain, epochs=args.epochs)
        train_router(lm, in_domain(), path, cfg, progress=progress, log_path=out / f"router-{learns}.jsonl")


def configs(learns: str | None, artefact: Path | None) -> dict:
    if learns is None:
        return {}
    if learns == "library":
        return {"elicit": ElicitConfig(library=str(artefact))}
    if learns == "generator":
        return {"atv": AtvConfig(generator=str(artefact))}
    return {"icr": ICRConfig(router=str(artefact))}


def run_variant(lm, out: Path, name: str, seeds: list[int], n_test: int, args, progress) -> dict:
    methods, learns = VARIANTS[name]
    artefact = out / ARTEFACTS[learns] if learns else None
    if learns and not args.from_units:
        learn(lm, learns, out, args, progress)
    return icl.suite(lm, [GROUP], ["zero-shot", *methods], out=out / name, seeds=seeds, n_test=n_test,
                     configs=configs(learns, artefact), progress=progress)


def items(reports: dict[str, dict], tasks: list[str], method: str) -> list[bool]:
    return [c for t in tasks for c in reports[t]["methods"][method]["correct"]]


def pooled(runs: dict[str, dict], row: tuple[str, str], tasks: list[str]) -> list[bool]:
    return items(runs[row[0]], tasks, row[1])


def interval(c: dict) -> str:
    return (f"{100 * c['diff']:+.1f} [{100 * c['ci95'][0]:+.1f}, {100 * c['ci95'][1]:+.1f}], "
            f"p = {c['p_mcnemar']:.2g}")


def table(runs: dict[str, dict], parts: dict[str, tuple[str, ...]]) -> str:
    """Per variant and method: mean accuracy per part, the out-of-domain mean, collapses and the pooled OOD gain;
    then the variants against each other on the pooled out-of-domain items."""
    base = next(iter(runs.values()))
    ood = [t for part in ("near-ood", "far-ood") for t in parts[part] if t in base]

    def means(reps: dict, method: str) -> str:
        per_part = [statistics.fmean(reps[t]["methods"][method]["accuracy"] for t in names if t in reps)
                    for names in parts.values()]
        return " | ".join(f"{m:.3f}" for m in per_part) + \
            f" | {statistics.fmean(reps[t]['methods'][method]['accuracy'] for t in ood):.3f}"

    def latency(reps: dict, method: str) -> str:  # per query, against zero-shot's in the same unit
        return f"{statistics.median(reps[t]['methods'][method]['latency_ratio_to_zero_shot'] for t in ood):.2f}"

    lines = ["| variant | " + " | ".join(parts) + " | OOD mean | OOD collapses (* p < 0.05) | OOD pooled − zero-shot "
             "(points [95%], McNemar p) | latency / zero-shot (OOD median) |",
             "|---|" + "---:|" * (len(parts) + 1) + "---|---|---:|",
             f"| zero-shot | {means(base, 'zero-shot')} | - | - | 1 |"]
    rows = [row for row in ROWS if row[0] in runs]
    for name, method in rows:
        reps = runs[name]
        below = {t: c for t in ood if (c := vs_base(reps[t], method))["diff"] < 0}
        gain = paired(items(reps, ood, method), items(reps, ood, "zero-shot"), item_names(reps, ood))
        lines.append(f"| {ROWS[name, method]} | {means(reps, method)} | "
                     + (" ".join(t + ("*" if significant(c) else "") for t, c in below.items()) or "none")
                     + f" | {interval(gain)} | {latency(reps, method)} |")
    pairs = [(a, b) for a, b in PAIRS if a in rows and b in rows]
    if pairs:
        n = len(items(base, ood, "zero-shot"))
        lines += ["", f"Variants against each other on the pooled out-of-domain items ({n} items):", ""]
    for a, b in pairs:
        c = paired(pooled(runs, a, ood), pooled(runs, b, ood), item_names(runs[a[0]], ood))
        lines.append(f"- {ROWS[a]} − {ROWS[b]}: {interval(c)}")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--n-test", type=int, default=100)
    p.add_argument("--examples-per-domain", type=int, default=TrainConfig.examples_per_domain,
                   help="the shipped recipe's unless time is short (say so beside the table)")
    p.add_argument("--epochs", type=int, default=TrainConfig.epochs)
    p.add_argument("--from-units", action="store_true",
                   help="learn nothing: every variant's units are in OUT (as in bench/results/icr-protocol), and the "
                        "table is drawn from them")
    p.add_argument("--only", default=",".join(VARIANTS),
                   help=f"comma-separated variants to run (parallel processes may each take some): "
                        f"{', '.join(VARIANTS)}; the table covers those given")
    args = p.parse_args()
    from tqdm import tqdm

    names = args.only.split(",")
    if unknown := set(names) - set(VARIANTS):
        p.error(f"unknown variants {sorted(unknown)}; choose from {list(VARIANTS)}")
    lm, seeds = icl.load_model(args.model), [int(s) for s in args.seeds.split(",")]
    runs = {name: run_variant(lm, args.out, name, seeds, args.n_test, args, tqdm) for name in names}
    text = (f"model {lm.name}, seeds {args.seeds}, n_test {args.n_test} per set and seed; routers trained on "
            f"{args.examples_per_domain} examples per domain for {args.epochs} epoch(s), one seed\n\n"
            + table(runs, load_group(GROUP).parts))
    stem = "protocol" if len(names) == len(VARIANTS) else "protocol-" + "-".join(names)
    (args.out / f"{stem}.md").write_text(text)
    (args.out / f"{stem}.json").write_text(json.dumps(
        {f"{n}/{m}": {t: r["methods"][m]["accuracy"] for t, r in runs[n].items()} for n, m in ROWS if n in runs},
        indent=2))
    print(text)


if __name__ == "__main__":
    main()
