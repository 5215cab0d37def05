"""ICR by its paper's protocol: a router trained on the five in-domain sets only, scored on the seven
out-of-domain sets of the `icr-paper` group, beside the shipped router and beside a random orthonormal basis of
the same rank in place of the PIDs (the paper's ablation).

    PYTHONPATH=. python bench/icr_protocol.py --model smollm2-135m --out runs/icr-protocol --seeds 0,1,2

Both routers are trained with the shipped recipe (`TrainConfig`'s defaults, the MANIFEST's flags) and one seed,
where the shipped router is an ensemble of five; training resumes from OUT. Each router then runs as `icr` in a
suite of its own over the whole group with zero-shot beside it, so every suite scores the same test items
(the seed draws them) and the routers pair item by item. The out-of-domain sets are for reporting only: nothing
here is chosen on them.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import icr_app as icl
from icr_app.core.tasks import HF_PREFIX, load_task
from icr_app.core.taskspecs import load_group
from icr_app.methods.icr.method import ICRConfig
from icr_app.methods.icr.train import TrainConfig, train_router
from icr_app.stats import paired, significant
from icr_app.suite_report import vs_base

GROUP = "icr-paper"
VARIANTS = {"shipped": None, "paper-protocol": "pids", "random-basis": "random"}


def train(lm, out: Path, cfg: TrainConfig, progress) -> Path:
    folder = out / f"router-{cfg.basis}"
    if not (folder / "router.safetensors").exists():
        domains = [load_task(HF_PREFIX + name) for name in load_group(GROUP).parts["in-domain"]]
        train_router(lm, domains, folder, cfg, progress=progress, log_path=out / f"router-{cfg.basis}.jsonl")
    return folder


def run_variant(lm, out: Path, name: str, router: Path | None, seeds: list[int], n_test: int, progress) -> dict:
    return icl.suite(lm, [GROUP], ["zero-shot", "icr"], out=out / name, seeds=seeds, n_test=n_test,
                     configs={"icr": ICRConfig(router=str(router) if router else None)}, progress=progress)


def items(reports: dict[str, dict], tasks: list[str], method: str) -> list[bool]:
    return [c for t in tasks for c in reports[t]["methods"][method]["correct"]]


def table(runs: dict[str, dict], parts: dict[str, tuple[str, ...]]) -> str:
    """Per variant: mean accuracy per part, the out-of-domain mean, collapses and the pooled OOD gain."""
    ood = [t for part in ("near-ood", "far-ood") for t in parts[part] if t in runs["shipped"]]
    lines = ["| router | " + " | ".join(parts) + " | OOD mean | OOD collapses (* p < 0.05) | OOD pooled − zero-shot "
             "(points [95%], McNemar p) |", "|---|" + "---:|" * (len(parts) + 1) + "---|---|"]
    base = runs["shipped"]
    zs = [statistics.fmean(base[t]["methods"]["zero-shot"]["accuracy"] for t in names if t in base)
          for names in parts.values()]
    lines.append("| zero-shot | " + " | ".join(f"{m:.3f}" for m in zs) + " | "
                 f"{statistics.fmean(base[t]['methods']['zero-shot']['accuracy'] for t in ood):.3f} | - | - |")
    for name, reps in runs.items():
        means = [statistics.fmean(reps[t]["methods"]["icr"]["accuracy"] for t in names if t in reps)
                 for names in parts.values()]
        below = {t: c for t in ood if (c := vs_base(reps[t], "icr"))["diff"] < 0}
        gain = paired(items(reps, ood, "icr"), items(reps, ood, "zero-shot"))
        lines.append(f"| {name} | " + " | ".join(f"{m:.3f}" for m in means) + " | "
                     f"{statistics.fmean(reps[t]['methods']['icr']['accuracy'] for t in ood):.3f} | "
                     + (" ".join(t + ("*" if significant(c) else "") for t, c in below.items()) or "none") + " | "
                     f"{100 * gain['diff']:+.1f} [{100 * gain['ci95'][0]:+.1f}, {100 * gain['ci95'][1]:+.1f}], "
                     f"p = {gain['p_mcnemar']:.2g} |")
    lines += ["", "Routers against each other on the pooled out-of-domain items:", ""]
    for a, b in (("paper-protocol", "random-basis"), ("paper-protocol", "shipped")):
        c = paired(items(runs[a], ood, "icr"), items(runs[b], ood, "icr"))
        lines.append(f"- {a} − {b}: {100 * c['diff']:+.1f} points [{100 * c['ci95'][0]:+.1f}, "
                     f"{100 * c['ci95'][1]:+.1f}], McNemar p = {c['p_mcnemar']:.2g} ({len(items(runs[a], ood, 'icr'))} "
                     "items)")
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
    p.add_argument("--only", choices=list(VARIANTS), default=None,
                   help="run one variant (routers train in parallel processes); the table needs all three")
    args = p.parse_args()
    from tqdm import tqdm

    lm, seeds = icl.load_model(args.model), [int(s) for s in args.seeds.split(",")]
    runs = {}
    for name, basis in VARIANTS.items():
        if args.only not in (None, name):
            continue
        cfg = TrainConfig(basis=basis or "pids", examples_per_domain=args.examples_per_domain, epochs=args.epochs)
        router = train(lm, args.out, cfg, tqdm) if basis else None
        runs[name] = run_variant(lm, args.out, name, router, seeds, args.n_test, tqdm)
    if args.only:
        return
    text = (f"model {lm.name}, seeds {args.seeds}, n_test {args.n_test} per set and seed; routers trained on "
            f"{args.examples_per_domain} examples per domain for {args.epochs} epoch(s), one seed\n\n"
            + table(runs, load_group(GROUP).parts))
    (args.out / "protocol.md").write_text(text)
    (args.out / "protocol.json").write_text(json.dumps({n: {t: r["methods"]["icr"]["accuracy"] for t, r in reps.items()}
                                                        for n, reps in runs.items()}, indent=2))
    print(text)


if __name__ == "__main__":
    main()
