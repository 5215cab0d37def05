"""An implicit method's per-query latency against zero-shot, in alternation so load drift on a shared CPU cancels.

    PYTHONPATH=. python bench/latency.py --data $ICL_LAB_DATA/fv/sentiment.json --site FILE.safetensors [--reps 5]
    PYTHONPATH=. python bench/latency.py --data movie-review --icr-router icr_app/assets/icr/smollm2-135m
    PYTHONPATH=. python bench/latency.py --data movie-review --method learned-task-vector

Times `predict` on the same seeded test split, zero-shot then the method (SITE with `--site`, ICR with
`--icr-router`, any registered method with `--method`, built on the split's train part with its defaults), `reps`
times, and prints the median per-query latency of each and the median of the
per-round ratios. Latency does not depend on how good the artefact is, only on what it runs (SITE's hooks;
ICR's sentence encoder, router and biased attention), so any artefact for this model will do.
"""

from __future__ import annotations

import argparse
import statistics
import time

from icr_app.core.models import DEFAULT_MODEL, load_model
from icr_app.core.tasks import load_task, split
from icr_app.methods import build_method
from icr_app.methods.base import Answering, Method
from icr_app.methods.icr.method import ICRConfig
from icr_app.methods.site.artefact import load_site
from icr_app.methods.site.method import SiteMethod
from icr_app.methods.zero_shot import ZeroShotMethod


def per_query_s(method: Method, queries: list[str]) -> float:
    t0 = time.perf_counter()
    method.predict(queries)
    return (time.perf_counter() - t0) / len(queries)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--site", help="a SITE artefact for this model")
    which.add_argument("--icr-router",
                       help="an ICR router folder for this model (icr_app/assets/icr/smollm2-135m: the shipped one)")
    which.add_argument("--method", help="a registered method, built here on the split's train part with its defaults")
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--n-test", type=int, default=100)
    args = p.parse_args()
    lm = load_model(args.model)
    task = load_task(args.data)
    train, test = split(task, args.n_test, seed=0, min_train=10)
    answering = Answering.of(lm, train, labels=task.labels)
    zero = ZeroShotMethod(lm, answering)
    if args.site:
        name, method = "SITE", SiteMethod(lm, load_site(args.site, lm))
    elif args.method:
        name, method = args.method, build_method(lm, train, args.method, answering=answering, seed=0)
    else:
        name, method = "ICR", build_method(lm, train, "icr", ICRConfig(router=args.icr_router), answering=answering)
    for m in (zero, method):
        per_query_s(m, test.inputs[:16])  # warm-up
    rounds = [(per_query_s(zero, test.inputs), per_query_s(method, test.inputs)) for _ in range(args.reps)]
    z, s = (statistics.median(r[i] for r in rounds) for i in (0, 1))
    ratio = statistics.median(b / a for a, b in rounds)
    print(f"{task.name}: {len(test.inputs)} queries x {args.reps} alternating rounds")
    print(f"zero-shot {z * 1000:.1f} ms/query, {name} {s * 1000:.1f} ms/query, {name}/zero-shot median ratio "
          f"{ratio:.3f} (per round: {', '.join(f'{b / a:.3f}' for a, b in rounds)})")


if __name__ == "__main__":
    main()
