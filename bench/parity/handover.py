"""Hand ICL Lab's model and data to an authors' repository, in the formats their code reads (bench/parity/README.md).

    python bench/parity/handover.py --out $PARITY_RUN sentiment antonyms --seeds 0 1 --n-test 24

writes, under --out:
- `<model>/` (e.g. `smollm2-135m/`): the model's checkpoint as transformers 4.x reads it. ICL Lab's cached copy
  was written by transformers 5, whose config keeps the RoPE base under `rope_parameters` (4.x would silently
  fall back to its default base) and names a tokenizer class 4.x does not know. The weights are linked, not copied.
- `data/<task>-s<seed>[-tv|-fv]/{train,valid,test}.json`: ICL Lab's seeded `eval` split (the same `split` call and
  arguments as `icr_app.evaluation.evaluate`), the training part cut as the method's build cuts it (`--method`:
  SITE's `_holdout`, what it fits on and what it validates on; the task vector's `holdout`, what its prompts are
  drawn from and what chooses its layer, in folders ending `-tv`; the function vector's, which draws demonstrations
  and queries alike from the whole training part: that part as both `train` and `valid`, in folders ending `-fv`),
  each a list of {"input", "output"} records, the format SITE's and the function vectors' code read; `split.json`
  beside them records the arguments.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from icr_app.core.models import load_model
from icr_app.core.prompts import SHOTS
from icr_app.core.tasks import Example, Task, builtin_task, split
from icr_app.methods.site.method import SiteConfig, _holdout
from icr_app.methods.task_vector import TaskVectorConfig, holdout

TOKENIZER_V4 = "PreTrainedTokenizerFast"  # the class transformers 4.x builds from a bare tokenizer.json
SUFFIX = {"site": "", "task-vector": "-tv", "function-vector": "-fv", "i2cl": "-i2cl",  # a unit's folder:
          "iterative-vector": "-iv"}  # <task>-s<seed><suffix>


def records(examples: list[Example] | tuple[Example, ...]) -> list[dict[str, str]]:
    return [{"input": e.input, "output": e.output} for e in examples]


def cut(method: str, train: Task, seed: int) -> tuple[tuple[Example, ...], list[Example]]:
    """The training part as `method`'s build cuts it: (what it learns from, what it validates on)."""
    if method == "site":
        fit, val = _holdout(train, SiteConfig(), seed)  # reads max_examples and val_fraction, shared by presets
        return tuple(fit), list(val)
    if method == "function-vector":  # its prompts' demonstrations and queries both come from the whole part
        return train.examples, list(train.examples)
    source, val = holdout(train, TaskVectorConfig().val_size, seed)
    return source.examples, val


def task_files(task: Task, n_test: int, seed: int, method: str) -> dict[str, list[dict[str, str]]]:
    """{"train", "valid", "test"} records of ICL Lab's split of `task`: test as `evaluate` draws it; train and
    valid as `method`'s build cuts the training part."""
    train, test = split(task, n_test, seed, min_train=max(2, SHOTS))
    learn, val = cut(method, train, seed)
    return {"train": records(learn), "valid": records(val), "test": records(test.examples)}


def classification_units(out: Path, tasks: list[str], seeds: list[int], n_test: int, model: str, method: str,
                         authors: str) -> None:
    """`model` as a checkpoint and, per task and seed, ICL Lab's split as code that handles classification only
    reads it (`out/data/<task>-s<seed><suffix>`): the whole training part as train and as valid (such loaders
    want a validation split; the paths compared never read it), the test items in order, and split.json with the
    labels in ICL Lab's order. `authors` names their code in the refusal of an open task."""
    if not (out / model / "config.json").is_file():
        write_checkpoint(Path(load_model(model).model.name_or_path), out / model)
    for name in tasks:
        task = builtin_task(name)
        if task.kind != "classification":
            raise SystemExit(f"{name}: {authors} handles classification tasks only")
        for seed in seeds:
            train, test = split(task, n_test, seed, min_train=max(2, SHOTS))  # as icr_app.evaluation calls it
            folder = out / "data" / f"{name}-s{seed}{SUFFIX[method]}"
            folder.mkdir(parents=True, exist_ok=True)
            rows = {"train": records(train.examples), "valid": records(train.examples), "test": records(test.examples)}
            for part, recs in rows.items():
                (folder / f"{part}.json").write_text(json.dumps(recs, ensure_ascii=False, indent=1))
            meta = {"task": name, "kind": "classification", "seed": seed, "n_test": n_test,
                    "min_train": max(2, SHOTS), "method": method, "labels": list(train.labels)}
            (folder / "split.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1))
            print(f"{folder}: train {len(train.examples)}, test {len(test.examples)}, labels {meta['labels']}")


def v4_config(config: dict) -> dict:
    """A transformers-5 model config that transformers 4.x reads the same: the RoPE fields back at top level."""
    out = dict(config)
    for key, value in config.get("rope_parameters", {}).items():
        out.setdefault(key, value)
    out.setdefault("torch_dtype", config.get("dtype", "float32"))
    return out


def v4_tokenizer_config(config: dict) -> dict:
    return {**config, "tokenizer_class": TOKENIZER_V4}


def write_checkpoint(src: Path, dst: Path) -> None:
    """`src` (a transformers-5 checkpoint folder) as a folder transformers 4.x loads, weights linked."""
    dst.mkdir(parents=True, exist_ok=True)
    for weights in src.glob("*.safetensors"):
        link = dst / weights.name
        link.unlink(missing_ok=True)
        link.symlink_to(weights)
    for name in ("tokenizer.json", "generation_config.json"):
        if (src / name).is_file():
            shutil.copyfile(src / name, dst / name)
    for name, convert in (("config.json", v4_config), ("tokenizer_config.json", v4_tokenizer_config)):
        (dst / name).write_text(json.dumps(convert(json.loads((src / name).read_text())), indent=2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="+", help="built-in task names")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--n-test", type=int, default=24)
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--method", choices=("site", "task-vector", "function-vector"), default="site",
                    help="whose build's cut of the training part to hand over (I2CL's and the iterative vectors' "
                         "units: their compare script's `handover`)")
    args = ap.parse_args()
    write_checkpoint(Path(load_model(args.model).model.name_or_path), args.out / args.model)
    for name in args.tasks:
        task = builtin_task(name, kind="open")  # scored on the full vocabulary, as the authors' code scores
        for seed in args.seeds:
            folder = args.out / "data" / f"{name}-s{seed}{SUFFIX[args.method]}"
            folder.mkdir(parents=True, exist_ok=True)
            for part, rows in task_files(task, args.n_test, seed, args.method).items():
                (folder / f"{part}.json").write_text(json.dumps(rows, ensure_ascii=False, indent=1))
            meta = {"task": name, "kind": "open", "seed": seed, "n_test": args.n_test, "min_train": max(2, SHOTS),
                    "method": args.method}
            (folder / "split.json").write_text(json.dumps(meta, indent=1))
            print(f"{folder}: " + ", ".join(f"{p} {len(json.loads((folder / f'{p}.json').read_text()))}"
                                            for p in ("train", "valid", "test")))


if __name__ == "__main__":
    main()
