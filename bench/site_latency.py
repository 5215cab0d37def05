"""SITE's per-query latency against zero-shot, measured in alternation so load drift on a shared CPU cancels.

    PYTHONPATH=. python bench/site_latency.py --data ../shared/data/fv/sentiment.json --site FILE.safetensors [--reps 5]

Times `predict` on the same seeded 100-query test split, zero-shot then SITE, `reps` times, and prints
the median per-query latency of each and the median of the per-round ratios. Latency does not depend
on how good the SITE task is, only on its hooks, so any artefact for this model will do.
"""

from __future__ import annotations

import argparse
import statistics
import time

from icr_app.methods import Method, ZeroShot
from icr_app.models import DEFAULT_MODEL, load_model
from icr_app.site import SiteMethod
from icr_app.site_artefact import load_site
from icr_app.tasks import load_task, split


def per_query_s(method: Method, queries: list[str]) -> float:
    t0 = time.perf_counter()
    method.predict(queries)
    return (time.perf_counter() - t0) / len(queries)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True)
    p.add_argument("--site", required=True, help="a SITE artefact for this model")
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--n-test", type=int, default=100)
    args = p.parse_args()
    lm = load_model(args.model)
    task = load_task(args.data)
    train, test = split(task, args.n_test, seed=0, min_train=10)
    zero, site = ZeroShot(lm, train, labels=task.labels), SiteMethod(lm, load_site(args.site, lm))
    per_query_s(zero, test.inputs[:16])  # warm-up
    rounds = [(per_query_s(zero, test.inputs), per_query_s(site, test.inputs)) for _ in range(args.reps)]
    z, s = (statistics.median(r[i] for r in rounds) for i in (0, 1))
    ratio = statistics.median(b / a for a, b in rounds)
    print(f"{task.name}: {len(test.inputs)} queries x {args.reps} alternating rounds")
    print(f"zero-shot {z * 1000:.1f} ms/query, SITE {s * 1000:.1f} ms/query, SITE/zero-shot median ratio "
          f"{ratio:.3f} (per round: {', '.join(f'{b / a:.3f}' for a, b in rounds)})")


if __name__ == "__main__":
    main()
