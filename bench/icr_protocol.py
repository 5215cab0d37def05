"""ICR and ELICIT by the ICR paper's protocol: a router, and an ELICIT library, learnt from the five in-domain
sets only, scored on the seven out-of-domain sets of the `icr-paper` group, beside the shipped router and library
(13 other domains) and beside a router with a random orthonormal basis of the same rank in place of the PIDs (the
paper's ablation).

    PYTHONPATH=. python bench/icr_protocol.py --model smollm2-135m --out runs/icr-protocol --seeds 0,1,2

Both routers are trained with the shipped recipe (`TrainConfig`'s defaults, the MANIFEST's flags) and one seed,
where the shipped router is an ensemble of five; training resumes from OUT. The library is built with
`LibraryConfig`'s defaults (the paper's settings, as the shipped library), each entry in its set's own prompt.
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
from icr_app.methods.elicit.library import FILE, build_library
from icr_app.methods.elicit.method import ElicitConfig
from icr_app.methods.icr.method import ICRConfig
from icr_app.methods.icr.train import TrainConfig, train_router
from icr_app.stats import paired, significant
from icr_app.suite_report import item_names, vs_base

GROUP = "icr-paper"
# variant: the methods its suite scores beside zero-shot, and what it learns from the in-domain sets (None: the
# artefacts shipped with the model)
VARIANTS = {"shipped": (("icr", "elicit"), None), "paper-protocol": (("icr",), "pids"),
            "random-basis": (("icr",), "random"), "elicit-protocol": (("elicit",), "library")}
ROWS = {("shipped", "icr"): "ICR, shipped router", ("shipped", "elicit"): "ELICIT, shipped library",
        ("paper-protocol", "icr"): "ICR, paper-protocol router", ("random-basis", "icr"): "ICR, random basis",
        ("elicit-protocol", "elicit"): "ELICIT, paper-protocol library"}
PAIRS = ((("elicit-protocol", "elicit"), ("paper-protocol", "icr")), (("shipped", "elicit"), ("shipped", "icr")),
         (("paper-protocol", "icr"), ("random-basis", "icr")), (("paper-protocol", "icr"), ("shipped", "icr")))


def in_domain() -> list:
    return [load_task(HF_PREFIX + name) for name in load_group(GROUP).parts["in-domain"]]


def train(lm, out: Path, cfg: TrainConfig, progress) -> Path:
    folder = out / f"router-{cfg.basis}"
    if not (folder / "router.safetensors").exists():
        train_router(lm, in_domain(), folder, cfg, progress=progress, log_path=out / f"router-{cfg.basis}.jsonl")
    return folder


def build(lm, out: Path, progress) -> Path:
    path = out / "elicit-library" / FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        library = build_library(lm, in_domain(), progress=progress)
        library.save(path, lm.fingerprint)
        print(f"library built in {library.info['build_s']:.0f} s; held-out top-1 {library.info['held_out_top1']:.2f}")
    return path


def configs(learns: str | None, artefact: Path | None) -> dict:
    if learns is None:
        return {}
    if learns == "library":
        return {"elicit": ElicitConfig(library=str(artefact))}
    return {"icr": ICRConfig(router=str(artefact))}


def run_variant(lm, out: Path, name: str, seeds: list[int], n_test: int, args, progress) -> dict:
    methods, learns = VARIANTS[name]
    artefact = None
    if learns == "library":
        artefact = build(lm, out, progress)
    elif learns:
        cfg = TrainConfig(basis=learns, examples_per_domain=args.examples_per_domain, epochs=args.epochs)
        artefact = train(lm, out, cfg, progress)
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

    lines = ["| variant | " + " | ".join(parts) + " | OOD mean | OOD collapses (* p < 0.05) | OOD pooled − zero-shot "
             "(points [95%], McNemar p) |", "|---|" + "---:|" * (len(parts) + 1) + "---|---|",
             f"| zero-shot | {means(base, 'zero-shot')} | - | - |"]
    rows = [row for row in ROWS if row[0] in runs]
    for name, method in rows:
        reps = runs[name]
        below = {t: c for t in ood if (c := vs_base(reps[t], method))["diff"] < 0}
        gain = paired(items(reps, ood, method), items(reps, ood, "zero-shot"), item_names(reps, ood))
        lines.append(f"| {ROWS[name, method]} | {means(reps, method)} | "
                     + (" ".join(t + ("*" if significant(c) else "") for t, c in below.items()) or "none")
                     + f" | {interval(gain)} |")
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
