"""ICL Lab's iterative vectors beside their authors' code on the handed-over splits: accuracy item by item, and what
was learnt.

    PYTHONPATH=. python bench/parity/compare_iv.py handover --run $PARITY_RUN sentiment headline-topic --seeds 0
    PYTHONPATH=. python bench/parity/compare_iv.py compare --run $PARITY_RUN sentiment-s0-iv ...

`handover` writes ICL Lab's seeded `eval` split of each task (the same `split` call as `evaluate`), loaded as a
classification task (their code knows classification only: per-label rows, the labels' first tokens scored),
under `data/<task>-s<seed>-iv/`: `train.json` the whole training part (ICL Lab's build draws every episode's
demonstrations and query from all of it; their extraction draws both from their train split), `valid.json` the
same records (their loader returns one; nothing on the `--run-test` path reads it), `test.json` the test items in
order, `split.json` the arguments and the labels in ICL Lab's order. The checkpoint is handover.py's.

`compare` takes each unit that iv_authors.py ran on (`iv/<unit>/authors`) and builds ICL Lab's iterative vectors on
the same split with the settings their run used (`matched`), then these answer the same test items zero-shot, all
scored by ICL Lab (the argmax over the labels' first tokens, which is also the authors' score): zero-shot, ours,
ours built with another seed (seed + 1000: other episodes; the noise a rerun of ours alone shows), and their vectors
loaded into ours ("theirs in ours"), which must answer as their code does item by item, and ours read as theirs
reads (`extract` on our own episodes, each query alone read one token earlier, as below). What was learnt: per layer,
the cosine of the query rows (the vector answering adds) and of the label rows, and their norms, ours against
theirs and against ours reseeded. The mechanics, on their own episodes: ICL Lab's `extract` run on the episodes
their code drew (the same prompts, the same order of updates), once as ICL Lab reads the zero-shot query (at its
answer position) and once reading it one token earlier, as their `extract_iv` does (its answer mask shifted by
one): the second must give their vectors up to float noise. Checked too: their prompts' token ids and answer
positions against ICL Lab's for the same texts, and the probe. Written to `iv/<unit>/compare.json` and
`iv/summary.json`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import torch
from compare_site import probe_gap
from handover import classification_units
from safetensors.torch import load_file
from units import accuracy_cells, compared, handed_split, handover_and_compare, mean, report

from icr_app.core.models import LoadedModel, load_model
from icr_app.core.prompts import Template
from icr_app.core.tasks import Example
from icr_app.methods import build_method
from icr_app.methods.base import Answering, Method
from icr_app.methods.iterative_vector import IterativeVectorConfig, IterativeVectorMethod
from icr_app.methods.iterative_vector.method import Episode, extract, make_episode, sample_episodes
from icr_app.methods.zero_shot import ZeroShotMethod
from icr_app.stats import paired

RESEED = 1000


def matched(settings: dict) -> IterativeVectorConfig:
    """ICL Lab's configuration at the settings the authors' run used."""
    return IterativeVectorConfig(episodes=settings["episodes"], demos_per_class=settings["demos_per_label"],
                                 update_every=settings["update_every"], extraction_strength=settings["ext_strength"],
                                 strength=settings["strength"])


def predicted(method: Method, inputs: list[str]) -> list[int]:
    """The index of the label each item is answered with."""
    return [method.labels.index(p.prediction) for p in method.predict(inputs, batch_size=8)]


def their_episodes(lm: LoadedModel, template: Template, items: dict) -> list[Episode]:
    """The episodes their run drew, as ICL Lab's episodes: the same demonstrations in the same order, the query."""
    row_of = {label: i for i, label in enumerate(items["labels"])}

    def example(r: dict) -> Example:
        return Example(r["input"], r["output"])

    return [make_episode(lm, template, [example(d) for d in e["demos"]], example(e["query"]), row_of)
            for e in items["episodes"]]


def one_token_earlier(lm: LoadedModel, episode: Episode) -> Episode:
    """The episode with its zero-shot prompt cut by its last token: its last token is the one their `extract_iv`
    reads the query alone at."""
    ids = lm.tokenizer(episode.zero_shot)["input_ids"]
    head = lm.tokenizer.decode(ids[:-1])
    if lm.tokenizer(head)["input_ids"] != ids[:-1]:
        raise ValueError(f"{episode.zero_shot!r} does not cut at its last token")
    return replace(episode, zero_shot=head)


def same_prompts(lm: LoadedModel, episodes: list[Episode], items: dict, template: Template,
                 inputs: list[str]) -> dict[str, int]:
    """How many of their prompts have ICL Lab's token ids and answer positions for the same texts: the few-shot
    prompts (theirs carry the query's answer after it), the query alone, the test prompts."""
    few = alone = test = 0
    for e, (pos, neg) in zip(episodes, zip(items["prompts"][0::2], items["prompts"][1::2])):
        ids = lm.tokenizer(e.prompt)["input_ids"]
        few += pos["ids"][: len(ids)] == ids and tuple(pos["marks"]) == e.positions
        zero = lm.tokenizer(e.zero_shot)["input_ids"]
        alone += neg["ids"][: len(zero)] == zero and neg["marks"] == [len(zero) - 1]
    for x, p in zip(inputs, items["test prompts"]):
        zero = lm.tokenizer(template.zero_shot(x))["input_ids"]
        test += p["ids"][: len(zero)] == zero and p["marks"] == [len(zero) - 1]
    return {"few-shot": few, "query alone": alone, "episodes": len(episodes), "test": test, "n_test": len(inputs)}


def per_layer_cosine(a: torch.Tensor, b: torch.Tensor) -> list[float]:
    """(L, d) or (L, R, d): the cosine per layer (averaged over rows)."""
    cos = torch.nn.functional.cosine_similarity(a.double(), b.double(), dim=-1)
    return (cos if cos.dim() == 1 else cos.mean(-1)).tolist()


def learnt(ours: torch.Tensor, other: torch.Tensor) -> dict:
    """What two sets of vectors (L, R, d) share: per layer the query rows' cosine and the label rows' mean cosine,
    and the largest relative difference of any row (‖a − b‖ / ‖b‖)."""
    rel = ((ours.double() - other.double()).norm(dim=-1) / other.double().norm(dim=-1)).max()
    return {"query cosine": per_layer_cosine(ours[:, -1], other[:, -1]),
            "label cosine": per_layer_cosine(ours[:, :-1], other[:, :-1]), "max relative difference": float(rel)}


def compare_unit(lm: LoadedModel, run: Path, unit: str) -> dict:
    authors = run / "iv" / unit / "authors"
    meta, train, test = handed_split(run, unit)
    answering = Answering.of(lm, train)
    items = json.loads((authors / "items.json").read_text())
    if list(answering.labels) != items["labels"]:
        raise SystemExit(f"{unit}: labels differ: ours {answering.labels}, theirs {items['labels']}")
    theirs = load_file(str(authors / "learnt.safetensors"))["vectors"]
    config = matched(items["settings"])
    ours = build_method(lm, train, "iterative-vector", config, answering=answering, seed=meta["seed"])
    again = build_method(lm, train, "iterative-vector", config, answering=answering, seed=meta["seed"] + RESEED)
    rows = len(items["labels"]) + 1
    own = sample_episodes(lm, train, answering, config, meta["seed"])  # the episodes `ours` was built from
    as_theirs, _ = extract(lm, [one_token_earlier(lm, e) for e in own], rows, config)
    methods = {"zero-shot": ZeroShotMethod(lm, answering), "ours": ours, "ours reseeded": again,
               "theirs in ours": IterativeVectorMethod(lm, replace(ours.state, vectors=theirs)),
               "ours, read as theirs": IterativeVectorMethod(lm, replace(ours.state, vectors=as_theirs))}
    preds = {name: predicted(m, test.inputs) for name, m in methods.items()}
    preds |= {f"authors {side}": p for side, p in items["pred"].items()}
    hits = {name: [p == g for p, g in zip(pred, items["gold"])] for name, pred in preds.items()}
    episodes = their_episodes(lm, answering.template, items)
    on_theirs, _ = extract(lm, episodes, rows, config)
    shifted, _ = extract(lm, [one_token_earlier(lm, e) for e in episodes], rows, config)

    def agree(a: str, b: str) -> int:
        return sum(x == y for x, y in zip(preds[a], preds[b]))

    return {
        "unit": unit, "task": meta["task"], "seed": meta["seed"], "n": len(test.inputs), "settings": items["settings"],
        "hits": hits, "preds": preds, "gold": items["gold"],
        "items that agree": {"ours, authors": agree("ours", "authors iterative-vector"),
                             "ours, ours reseeded": agree("ours", "ours reseeded"),
                             "theirs in ours, authors": agree("theirs in ours", "authors iterative-vector"),
                             "zero-shot, authors zero-shot": agree("zero-shot", "authors zero-shot")},
        "authors paper-style accuracy": items["paper-style accuracy"],
        "vs theirs": learnt(ours.state.vectors, theirs), "vs reseeded": learnt(ours.state.vectors, again.state.vectors),
        "read as theirs, vs theirs": learnt(as_theirs, theirs),
        "query norms": {"ours": ours.state.vectors[:, -1].norm(dim=-1).tolist(),
                        "ours reseeded": again.state.vectors[:, -1].norm(dim=-1).tolist(),
                        "theirs": theirs[:, -1].norm(dim=-1).tolist()},
        "their episodes, read at the answer position": learnt(on_theirs, theirs),
        "their episodes, read one token earlier": learnt(shifted, theirs),
        "same prompts": same_prompts(lm, episodes, items, answering.template, test.inputs),
        "build_s": {"ours": ours.state.meta.build_s, "authors (whole run)": items["time_s"]},
        "probe": probe_gap(lm, items["probe"]),
    }


def summary(units: list[dict]) -> dict:
    """Accuracies and paired tests over the pooled items of `units` (one task's units, or all of them)."""
    pooled = {side: [h for u in units for h in u["hits"][side]] for side in units[0]["hits"]}
    n = len(pooled["ours"])

    def each(key: str, part: str) -> list[float]:
        return [mean(u[key][part]) for u in units]

    return {
        "n": n, "accuracy": {side: sum(h) / n for side, h in pooled.items()},
        "ours vs authors": paired(pooled["ours"], pooled["authors iterative-vector"]),
        "ours vs ours reseeded": paired(pooled["ours"], pooled["ours reseeded"]),
        "ours read as theirs vs authors": paired(pooled["ours, read as theirs"], pooled["authors iterative-vector"]),
        "items that agree": {k: sum(u["items that agree"][k] for u in units) for k in units[0]["items that agree"]}
        | {"ours read as theirs, authors": sum(a == b for u in units for a, b in zip(
            u["preds"]["ours, read as theirs"], u["preds"]["authors iterative-vector"]))},
        "query cosine, mean over layers": each("vs theirs", "query cosine"),
        "query cosine reseeded, mean over layers": each("vs reseeded", "query cosine"),
        "ours read as theirs, query cosine with theirs": each("read as theirs, vs theirs", "query cosine"),
        "their episodes at the answer position, query cosine": each("their episodes, read at the answer position",
                                                                    "query cosine"),
        "their episodes one token earlier, max relative difference": [
            u["their episodes, read one token earlier"]["max relative difference"] for u in units],
    }


HEADER = ("| method | task | n | zero-shot | ours | theirs | p | ours, reseeded | agree: ours–theirs / ours–reseeded | "
          "query cos, vs theirs / vs reseeded | their episodes: cos at the answer position / max rel. diff one "
          "token earlier | ours read as theirs: accuracy / query cos vs theirs | theirs in ours |\n"
          + "| --- " * 13 + "|")


def table_row(task: str, s: dict) -> str:
    """docs/fidelity.md's row for one task's summary (columns: HEADER)."""
    acc, agree = s["accuracy"], s["items that agree"]
    return (accuracy_cells("iterative vectors", task, s, acc, "authors iterative-vector")
            + f"{agree['ours, authors']} / {agree['ours, ours reseeded']} | "
            f"{mean(s['query cosine, mean over layers']):.3f} / "
            f"{mean(s['query cosine reseeded, mean over layers']):.3f} | "
            f"{mean(s['their episodes at the answer position, query cosine']):.3f} / "
            f"{max(s['their episodes one token earlier, max relative difference']):.1e} | "
            f"{acc['ours, read as theirs']:.2f} / {mean(s['ours read as theirs, query cosine with theirs']):.3f} | "
            f"{agree['theirs in ours, authors']}/{s['n']} |")


def compare(run: Path, units: list[str], model: str) -> None:
    lm = load_model(model)

    def describe(u: dict) -> str:
        acc = {k: sum(v) for k, v in u["hits"].items()}
        return (f"hits of {u['n']} {acc}, agree {u['items that agree']}, query cos mean "
                f"{mean(u['vs theirs']['query cosine']):.3f} (reseeded {mean(u['vs reseeded']['query cosine']):.3f}), "
                f"their episodes one token earlier: max rel diff "
                f"{u['their episodes, read one token earlier']['max relative difference']:.1e}, "
                f"prompts {u['same prompts']}, probe {u['probe']}")

    done = compared(run, "iv", units, lambda unit: compare_unit(lm, run, unit), describe)
    print(HEADER)
    report(run, "iv", done, summary, table_row)


def main() -> None:
    ap, _ = handover_and_compare(__doc__.splitlines()[0], "sentiment-s0-iv", "built-in classification task names")
    args = ap.parse_args()
    if args.command == "handover":
        classification_units(args.run, args.tasks, args.seeds, args.n_test, args.model, "iterative-vector",
                             "the iterative vectors' authors' code")
    else:
        compare(args.run, args.units, args.model)


if __name__ == "__main__":
    main()
