"""Settle the PIDs' open questions (icr_app/methods/icr/README.md) by measurement: pre- vs post-RoPE, centred
vs uncentred.

For each variant we fit rank-r bases on the in-domain few-shot prompts and measure, on the routed layers,
how much of what ICL actually changes the bases capture: Δq = q(few-shot) − q(zero-shot) and Δk likewise
at the last token of the same query, for held-out queries of in-domain and unseen tasks (share of ‖Δ‖² in
span(U); a random rank-r subspace would keep r/d). Usage: python bench/icr_pid_variants.py > /tmp/icr-pid-variants.txt
"""

from __future__ import annotations

import random

import torch

from icr_app.core.datafetch import fv_dir, require_fv
from icr_app.core.models import load_model
from icr_app.core.prompts import Template
from icr_app.core.tasks import load_task, sample_demos, split
from icr_app.methods.icr.pids import capture_last_qk, fit_pids, icl_prompts
from icr_app.methods.icr.router import last_third

FV = f"{fv_dir()}/"  # $ICL_LAB_DATA/fv: `icl-lab data fetch fv` brings it
IN_DOMAIN = [FV + n + ".json" for n in ("sentiment", "ag_news", "person-instrument", "antonym", "capitalize",
                                        "present-past")]
UNSEEN = [FV + "singular-plural.json", FV + "country-capital.json", FV + "national_parks.json", "emotion"]


def paired_prompts(task, n: int, seed: int) -> tuple[list[str], list[str]]:
    """The same held-out queries zero-shot and with 5 class-balanced demonstrations."""
    train, test = split(task, 100, 0)
    rng, t = random.Random(seed), Template()
    queries = rng.sample(list(test.examples), min(n, len(test.examples)))
    fs = [t.few_shot(sample_demos(train, 5, rng), q.input) for q in queries]
    return fs, [t.zero_shot(q.input) for q in queries]


def share(delta: torch.Tensor, u: torch.Tensor) -> float:
    """Mean over rows of ‖Uᵀδ‖² / ‖δ‖²."""
    return float(((delta @ u).square().sum(-1) / delta.square().sum(-1)).mean())


def main() -> None:
    require_fv()
    lm = load_model()
    layers = last_third(lm.n_layers)
    tasks = [load_task(p) for p in IN_DOMAIN]
    fit_prompts = [p for i, t in enumerate(tasks) for p in icl_prompts(t, 24, seed=i)]
    captured = capture_last_qk(lm, fit_prompts)
    deltas = {}
    for group, paths in (("in-domain", IN_DOMAIN), ("unseen", UNSEEN)):
        fs, zs = zip(*[paired_prompts(load_task(p), 12, 1) for p in paths])
        a = capture_last_qk(lm, [p for x in fs for p in x])
        b = capture_last_qk(lm, [p for x in zs for p in x])
        deltas[group] = {k: a[k] - b[k] for k in a}
    print(f"model={lm.fingerprint} fit prompts={len(fit_prompts)} routed layers={layers[0]}..{layers[-1]} r=8")
    print(f"{'variant':<22} {'Δq in':>7} {'Δk in':>7} {'Δq unseen':>9} {'Δk unseen':>9} {'fit energy q':>12}")
    for rope in ("pre", "post"):
        for centred in (False, True):
            pids = fit_pids(captured, 8, rope, centred, {})
            row = []
            for group in ("in-domain", "unseen"):
                for which, u in (("q", pids.u_q), ("k", pids.u_k)):
                    d = deltas[group][f"{which}_{rope}"]
                    row.append(sum(share(d[:, layer], u[layer]) for layer in layers) / len(layers))
            kept = sum(pids.meta["energy_kept_q"][layer] for layer in layers) / len(layers)
            name = f"{rope}-RoPE {'centred' if centred else 'uncentred'}"
            print(f"{name:<22} {row[0]:>7.3f} {row[1]:>7.3f} {row[2]:>9.3f} {row[3]:>9.3f} {kept:>12.3f}")
    print("random rank-8 subspace share (expected): q", 8 / (lm.n_heads * lm.head_dim),
          "k", 8 / (lm.n_kv_heads * lm.head_dim))


if __name__ == "__main__":
    main()
