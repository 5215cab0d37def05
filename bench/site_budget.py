"""SITE's build budget: build with each named config on each task and score the same held-out split.

    python bench/site_budget.py --out /tmp/site-budget --configs previous,default sentiment TASK.json ...

n_test 100, seed 0, the `eval` split; open tasks are scored with and without decode-time injection (the same
built task, timed batch by batch in turn). One JSON per (task, config) in --out (skipped when present, so a
run resumes); the table at the end reads them all.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from icr_app.core.models import load_model
from icr_app.core.tasks import load_task, split
from icr_app.evaluation import score_interleaved, warm_up
from icr_app.methods import build_method
from icr_app.methods.base import Answering
from icr_app.methods.site.method import SiteConfig, SiteMethod

CONFIGS = {
    "previous": SiteConfig(n_prompts=32, n_demos=8, steps=100, batch_size=16, lr=0.2, eval_every=10),
    "f1": SiteConfig(n_prompts=16, n_demos=8, steps=40, batch_size=8, lr=0.2),
    "f4": SiteConfig(n_prompts=16, n_demos=8, steps=30, batch_size=16, lr=0.4),
    "default": SiteConfig(),
}


def run(lm, data: str, names: list[str], out: Path) -> None:
    task = load_task(data)
    tag = Path(data).stem if Path(data).suffix else f"builtin-{data}"
    train, test = split(task, 100, 0, min_train=10)
    answering = Answering.of(lm, train, None, task.labels)
    warm_up(lm, answering, test.inputs, 16)
    for name in names:
        dest = out / f"{tag}--{name}.json"
        if dest.exists():
            continue
        t0 = time.perf_counter()
        site = build_method(lm, train, "site", CONFIGS[name], answering=answering).state
        record = {"task": tag, "config": name, "build_s": time.perf_counter() - t0, "steps": site.meta.steps}
        methods = {"prefill": SiteMethod(lm, site)}
        if task.kind == "open":
            methods["decode"] = SiteMethod(lm, site, decode_inject=True)
        for key, res in score_interleaved(methods, test, 16).items():
            record.update({f"{key}_accuracy": res.accuracy, f"{key}_first_token": res.first_token_accuracy,
                           f"{key}_latency_s": res.latency_s})
        print(record, flush=True)
        dest.write_text(json.dumps(record))


def table(out: Path) -> str:
    rows = ["| task | config | build s | steps | accuracy (first-token) | with decode-time injection |",
            "|---|---|---:|---:|---:|---:|"]
    for path in sorted(out.glob("*--*.json")):
        r = json.loads(path.read_text())
        decode = (f"{r['decode_accuracy']:.2f} ({r['decode_first_token']:.2f}), "
                  f"{r['decode_latency_s'] / r['prefill_latency_s']:.2f}× latency" if "decode_accuracy" in r else "")
        rows.append(f"| {r['task']} | {r['config']} | {r['build_s']:.0f} | {r['steps']} | "
                    f"{r['prefill_accuracy']:.2f} ({r['prefill_first_token']:.2f}) | {decode} |")
    return "\n".join(rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("/tmp/site-budget"))
    p.add_argument("--configs", default="previous,default", help=f"comma list of: {', '.join(CONFIGS)}")
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("tasks", nargs="*", help="task files or built-in names")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.tasks:
        lm = load_model(args.model)
        for data in args.tasks:
            run(lm, data, args.configs.split(","), args.out)
    print(table(args.out))


if __name__ == "__main__":
    main()
