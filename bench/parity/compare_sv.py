"""ICL Lab's state vector beside its authors' code (HITsz-TMG/ICL-State-Vector) on the same prompt and items.

    PYTHONPATH=. python bench/parity/compare_sv.py handover --run $PARITY_RUN antonyms sentiment --seeds 0
    (sv_authors.py on each unit)
    PYTHONPATH=. python bench/parity/compare_sv.py compare --run $PARITY_RUN antonyms-s0-sv sentiment-s0-sv

`handover` writes, per task and seed, `data/<task>-s<seed>-sv/`: ICL Lab's `eval` split with the training part
cut as the state vector's build cuts it (`holdout`: `train.json` what its prompt is drawn from, `valid.json` what
chooses the number of edited layers, `test.json` the test items in order), and `0.json`, the same in the
authors' file layout (`demon`: the 10 demonstrations of the one prompt ICL Lab's `state-vector@paper` draws, in
its order; `dummy_test`: that prompt's dummy query; `valid`, `test`).

`compare` builds ICL Lab's state vector at the paper's settings (one prompt of 10 demonstrations, window 7,
momentum over 5 differences weighed 1, 2, 4, 8, 16) in each of the three modes the authors' script evaluates
(their optimizers `none`, `fixed` and `fix-one-step`: average, inner, momentum), and compares, per unit:
- the prompt: ours (`shown`) and theirs (`format_example`) as token ids (each position that differs, as text)
  and separator positions, and ours as the build draws it (`sampled`);
- what was learnt: their states (every separator, every layer) against ours read from the same prompt text, and
  each mode's vector, layer by layer (cosine, norms, relative distance); the mechanics apart from the prompt:
  their token ids read by ICL Lab's `separator_states` against their states, and ICL Lab's inner and momentum
  applied to their states against their optimizers' vectors;
- the number of edited layers: ours chosen by ICL Lab's build on `valid`; theirs by the same rule (most accurate,
  ties to the higher mean gold probability) on their own code's accuracies over `valid` at every n (their script
  reads n from a table made for Llama-2-7B and GPT-J);
- the answers: first-token hits item by item on the test items (ours by ICL Lab's generation, theirs the argmax
  their code scored), zero-shot beside their `Regular`, our momentum built with another seed, and their vector at
  their n written by ICL Lab ("theirs in ours"), which must give their token on every item ("replayed").
Printed and written to `sv/<unit>/compare.json`, pooled in `sv/summary.json`.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import torch
from compare_site import agreement, probe_gap
from handover import records, write_checkpoint
from safetensors.torch import load_file
from units import accuracy_cells, compare_and_report, handed_split, handover_and_compare, mean

from icr_app.core.models import LoadedModel, load_model
from icr_app.core.prompts import SHOTS, Template
from icr_app.core.scoring import first_token_id
from icr_app.core.tasks import Example, Task, builtin_task, sample_demos, split
from icr_app.methods import build_method
from icr_app.methods.base import Answering, Method
from icr_app.methods.last_token import best_layer
from icr_app.methods.state_vector.method import StateVectorConfig, StateVectorMethod, holdout, sampled
from icr_app.methods.state_vector.reading import Shown, inner, momentum, separator_states, shown
from icr_app.methods.zero_shot import ZeroShotMethod
from icr_app.stats import paired

PAPER = StateVectorConfig.paper()  # one prompt of 10 demonstrations; window 7, 5 steps, decay 1/2, lr 1
MODES = ("average", "inner", "momentum")  # their optimizers none, fixed (7 ones), fix-one-step (1, 2, 4, 8, 16, 0)
FOLDER = "sv"  # where under RUN the authors' runs and the comparisons go
RESEED = 1000  # "ours reseeded": our momentum built again with seed + RESEED (another prompt)


def paper_prompt(pool: Task, seed: int) -> tuple[list[Example], Example]:
    """(demonstrations, dummy query) of the one prompt `sampled` draws for `state-vector@paper` with `seed`;
    `compare_unit` checks it is still the prompt the build reads."""
    rng = random.Random(seed)
    query = rng.choice(pool.examples)
    k = min(PAPER.n_demos, len(pool.examples) - 1)
    return sample_demos(pool, k, rng, exclude_input=query.input), query


def handover(run: Path, tasks: list[str], seeds: list[int], n_test: int, model: str) -> None:
    write_checkpoint(Path(load_model(model).model.name_or_path), run / model)
    for name in tasks:
        for seed in seeds:
            train, test = split(builtin_task(name, kind="open"), n_test, seed, min_train=SHOTS)
            pool, val = holdout(train, PAPER.val_size, seed)
            demos, query = paper_prompt(pool, seed)
            folder = run / "data" / f"{name}-s{seed}-sv"
            folder.mkdir(parents=True, exist_ok=True)
            parts = {"train": records(pool.examples), "valid": records(val), "test": records(test.examples)}
            for part, rows in parts.items():
                (folder / f"{part}.json").write_text(json.dumps(rows, ensure_ascii=False, indent=1))
            theirs = {"demon": records(demos), "dummy_test": records([query])[0], "valid": parts["valid"],
                      "test": parts["test"]}
            (folder / "0.json").write_text(json.dumps(theirs, ensure_ascii=False, indent=1))
            meta = {"task": name, "kind": "open", "seed": seed, "n_test": n_test, "min_train": SHOTS,
                    "method": "state-vector", "config": "state-vector@paper"}
            (folder / "split.json").write_text(json.dumps(meta, indent=1))
            print(f"{folder}: demonstrations {len(demos)}, " + ", ".join(f"{p} {len(r)}" for p, r in parts.items()))


def layerwise(a: torch.Tensor, b: torch.Tensor) -> dict[str, list[float]]:
    """Per layer of two (L, width) vectors: cosine, both norms and the relative distance |a − b| / |b|."""
    a, b = a.double(), b.double()
    return {"cosine": torch.nn.functional.cosine_similarity(a, b, dim=-1).tolist(),
            "norm ours": a.norm(dim=-1).tolist(), "norm theirs": b.norm(dim=-1).tolist(),
            "relative distance": ((a - b).norm(dim=-1) / b.norm(dim=-1)).tolist()}


def their_choice(sweep: list[dict], mode: str) -> int:
    """Their number of edited layers for `mode`: ICL Lab's rule on their code's scores over `valid` at every n."""
    acc = torch.tensor([sum(s[mode]["valid hits"]) / len(s[mode]["valid hits"]) for s in sweep])
    gold = torch.tensor([mean(s[mode]["valid gold prob"]) for s in sweep])
    return best_layer(acc, gold) + 1


def with_vector(ours: StateVectorMethod, vector: torch.Tensor, n: int) -> StateVectorMethod:
    """Our state vector with another vector and number of edited layers (the sweep it keeps is ours)."""
    lm, state = ours.lm, ours.state
    meta = replace(state.meta, n_layers=n)
    return StateVectorMethod(lm, replace(state, vector=vector.float().view(lm.n_layers, lm.n_heads, lm.head_dim),
                                         meta=meta))


def refined(states: torch.Tensor, mode: str) -> torch.Tensor:
    """ICL Lab's refinement of a trajectory (k + 1, L, width) at the paper's settings."""
    if mode == "inner":
        return inner(states, PAPER.inner_window)
    if mode == "momentum":
        return momentum(states, PAPER.inner_window, PAPER.momentum_steps, PAPER.momentum_decay, PAPER.momentum_lr)
    return states[-1]


def same_prompt(lm: LoadedModel, template: Template, pool: Task, seed: int, items: dict) -> dict:
    """Ours as handed over, ours as the build draws it, and theirs: the same ids and separator positions? Where
    the ids differ, each position with both tokens as text."""
    demos, query = paper_prompt(pool, seed)
    ours = shown(lm, template, demos, query.input)
    drawn = sampled(lm, pool, template, 1, len(demos), seed)[0]
    theirs = items["prompt"]["ids"]
    differ = [[i, lm.tokenizer.decode([a]), lm.tokenizer.decode([b])]
              for i, (a, b) in enumerate(zip(ours.ids, theirs)) if a != b]
    return {"handed over is the build's": ours == drawn, "same ids": ours.ids == theirs,
            "same separators": ours.positions == items["prompt"]["separators"],
            "tokens": [len(ours.ids), len(theirs)], "positions that differ (ours, theirs)": differ,
            "their text": lm.tokenizer.decode(theirs) == template.few_shot(demos, query.input)}


def their_prompt_in_ours(lm: LoadedModel, items: dict, learnt: dict[str, torch.Tensor]) -> dict:
    """Their prompt's token ids read by ICL Lab's `separator_states`, against their states; ICL Lab's inner and
    momentum applied to their states, against their optimizers' vectors (largest absolute differences)."""
    read = separator_states(lm, [Shown(items["prompt"]["ids"], items["prompt"]["separators"])])
    return {"states read by ours, max abs diff": float((read - learnt["states"]).abs().max()),
            "their states refined by ours, max abs diff": {
                mode: float((refined(learnt["states"], mode) - learnt[mode]).abs().max()) for mode in MODES}}


def compare_unit(lm: LoadedModel, run: Path, unit: str) -> dict:
    authors = run / FOLDER / unit / "authors"
    meta, train, test = handed_split(run, unit)
    seed = meta["seed"]
    answering = Answering.of(lm, train)
    template = Method(lm, answering).template
    items = json.loads((authors / "items.json").read_text())
    learnt = load_file(str(authors / "learnt.safetensors"))
    pool, _ = holdout(train, PAPER.val_size, seed)
    ours = {mode: build_method(lm, train, "state-vector", replace(PAPER, mode=mode), answering=answering, seed=seed)
            for mode in MODES}
    again = build_method(lm, train, "state-vector", PAPER, answering=answering, seed=seed + RESEED)
    demos, query = paper_prompt(pool, seed)
    states = separator_states(lm, [shown(lm, template, demos, query.input)])  # (k + 1, L, width)
    theirs_n = {mode: their_choice(items["sweep"], mode) for mode in MODES}
    methods = {"zero-shot": ZeroShotMethod(lm, answering), "ours reseeded": again}
    for mode in MODES:
        methods[f"ours {mode}"] = ours[mode]
        methods[f"theirs in ours {mode}"] = with_vector(ours[mode], learnt[mode], theirs_n[mode])
    preds = {name: m.predict(test.inputs, batch_size=8) for name, m in methods.items()}
    gold = [first_token_id(lm, y) for y in test.outputs]
    hits = {name: [p.first_token == g for p, g in zip(ps, gold)] for name, ps in preds.items()}
    hits["ours"] = hits["ours momentum"]
    for side in ("zero-shot", "few-shot"):
        hits[f"authors {side}"] = [i == g for i, g in zip(items[side]["ids"], gold)]
    for mode in MODES:
        at = items["sweep"][theirs_n[mode] - 1][mode]
        hits[f"authors {mode}"] = [i == g for i, g in zip(at["test ids"], gold)]
        hits[f"authors {mode} at our n"] = [
            i == g for i, g in zip(items["sweep"][ours[mode].state.meta.n_layers - 1][mode]["test ids"], gold)]
    replayed = {mode: sum(p.first_token == i for p, i in zip(
        preds[f"theirs in ours {mode}"], items["sweep"][theirs_n[mode] - 1][mode]["test ids"])) for mode in MODES}
    their_curve = {mode: torch.tensor([sum(s[mode]["valid hits"]) / len(s[mode]["valid hits"])
                                       for s in items["sweep"]]) for mode in MODES}
    return {
        "unit": unit, "task": meta["task"], "seed": seed, "n": len(test.inputs), "hits": hits,
        "same gold token": sum(a == b for a, b in zip(gold, items["gold"])),
        "prompt": same_prompt(lm, template, pool, seed, items),
        "states": layerwise(states.flatten(0, 1), learnt["states"].flatten(0, 1)) | {
            "max abs diff": float((states - learnt["states"]).abs().max())},
        "vectors": {mode: layerwise(ours[mode].state.vector.flatten(1), learnt[mode]) for mode in MODES},
        "n layers": {mode: {"ours": ours[mode].state.meta.n_layers, "theirs": theirs_n[mode]} for mode in MODES}
        | {"ours reseeded": again.state.meta.n_layers},
        "curve": {mode: agreement(ours[mode].state.layer_accuracy, their_curve[mode]) | {
            "max abs diff": float((ours[mode].state.layer_accuracy - their_curve[mode]).abs().max())}
            for mode in MODES},
        "replayed items that agree": replayed,
        "their prompt in ours": their_prompt_in_ours(lm, items, learnt),
        "probe": probe_gap(lm, items["probe"]),
    }


def summary(units: list[dict]) -> dict:
    """Accuracies, paired tests and item agreement over the pooled items of `units`."""
    pooled = {side: [h for u in units for h in u["hits"][side]] for side in units[0]["hits"]}
    n = len(pooled["ours"])
    agree = {mode: sum(a == b for a, b in zip(pooled[f"ours {mode}"], pooled[f"authors {mode}"])) for mode in MODES}
    return {
        "n": n, "first-token accuracy": {side: sum(h) / n for side, h in pooled.items()},
        "ours vs authors": paired(pooled["ours"], pooled["authors momentum"]),
        "ours vs authors, by mode": {m: paired(pooled[f"ours {m}"], pooled[f"authors {m}"]) for m in MODES},
        "items where ours and theirs agree (hit or miss)": agree,
        "zero-shot items that agree": sum(a == b for a, b in zip(pooled["zero-shot"], pooled["authors zero-shot"])),
        "replayed items that agree": {m: sum(u["replayed items that agree"][m] for u in units) for m in MODES},
        "n layers (ours / theirs)": [{m: [u["n layers"][m]["ours"], u["n layers"][m]["theirs"]] for m in MODES}
                                     for u in units],
        "min cosine of the vectors over layers": {m: min(min(u["vectors"][m]["cosine"]) for u in units)
                                                  for m in MODES},
        "max abs diff of the states": max(u["states"]["max abs diff"] for u in units),
        "same prompt ids": all(u["prompt"]["same ids"] for u in units),
        "their prompt in ours": [u["their prompt in ours"] for u in units],
    }


def table_row(task: str, s: dict) -> str:
    """docs/fidelity.md's row for one task's summary (momentum, the paper's proposal and ICL Lab's default)."""
    acc = s["first-token accuracy"]
    layers = "; ".join(f"{u['momentum'][0]} / {u['momentum'][1]}" for u in s["n layers (ours / theirs)"])
    return (accuracy_cells("state vector", task, s, acc, "authors momentum")
            + f"{acc['ours inner']:.2f} / {acc['authors inner']:.2f} | {layers} | "
            f"{s['min cosine of the vectors over layers']['momentum']:.6f} | "
            f"{s['items where ours and theirs agree (hit or miss)']['momentum']}/{s['n']} | "
            f"{s['replayed items that agree']['momentum']}/{s['n']} |")


def described(u: dict) -> str:
    return (f"prompt {u['prompt']}, their prompt in ours {u['their prompt in ours']}, "
            f"states max abs diff {u['states']['max abs diff']:.2e}, n layers {u['n layers']}, vector cosine min "
            f"{ {m: round(min(u['vectors'][m]['cosine']), 6) for m in MODES} }, "
            f"replayed {u['replayed items that agree']}/{u['n']}, probe {u['probe']}")


def main() -> None:
    ap, _ = handover_and_compare(__doc__.splitlines()[0], "antonyms-s0-sv", "built-in task names")
    args = ap.parse_args()
    if args.command == "handover":
        handover(args.run, args.tasks, args.seeds, args.n_test, args.model)
    else:
        compare_and_report(args.run, FOLDER, args.units, args.model, compare_unit, described, summary, table_row)


if __name__ == "__main__":
    main()
