"""What several test modules share: the small configs methods are built with in tests, ICR's stand-in encoder and
routers, the checks on a model's hooks and answers, the app's tab handlers, the bad task files, and runs of the CLI
over several processes with their results compared.

Test modules import from here (and the model builders `tiny.py`, `families.py`), never from one another
(`test_imports.py` checks it).
"""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import torch
from packaging.requirements import Requirement

from icr_app.core.progress import Cancelled
from icr_app.core.tasks import builtin_task
from icr_app.methods.atv import generator as generator_module
from icr_app.methods.atv.generator import FILE as GENERATOR_FILE
from icr_app.methods.atv.generator import GeneratorConfig, build_generator
from icr_app.methods.atv.method import AtvConfig
from icr_app.methods.elicit import library as library_module
from icr_app.methods.elicit.library import FILE as LIBRARY_FILE
from icr_app.methods.elicit.library import LibraryConfig, build_library
from icr_app.methods.elicit.method import ElicitConfig
from icr_app.methods.function_vector import FunctionVectorConfig
from icr_app.methods.i2cl.method import I2CLConfig
from icr_app.methods.icr import router as router_module
from icr_app.methods.icr.method import ICRConfig
from icr_app.methods.icv.method import ICVConfig
from icr_app.methods.iterative_vector.method import IterativeVectorConfig
from icr_app.methods.learned_task_vector.method import LearnedTaskVectorConfig
from icr_app.methods.lora.method import LoraConfig
from icr_app.methods.site.method import SiteConfig
from icr_app.methods.state_vector.method import StateVectorConfig
from icr_app.methods.task_vector import TaskVectorConfig
from icr_app.methods.zero_shot import ZeroShotMethod

TINY_SITE = SiteConfig(n_prompts=4, n_demos=2, steps=4, batch_size=4, eval_every=2, patience=2, max_examples=20)
TINY_TV = TaskVectorConfig(n_prompts=4, val_size=6, batch_size=4)
TINY_FV = FunctionVectorConfig(n_prompts=3, n_corrupted=2, batch_size=2)
TINY_I2CL = I2CLConfig(demos_per_class=2, open_demos=4, calibration_examples=8, epochs=2, batch_size=4,
                       open_epochs=2, open_batch_size=4)
TINY_ICV = ICVConfig(n_demos=4, val_examples=6, strengths=[0.0, 0.1, 0.5])
TINY_LORA = LoraConfig(steps=4, batch_size=4, max_examples=16, eval_every=2, patience=2)
TINY_LTV = LearnedTaskVectorConfig(sweep=2, steps=4, batch_size=4, max_examples=16)
TINY_LIBRARY = LibraryConfig(n_prompts=3, n_demos=2, val_size=6, queries_per_domain=16, holdout=1, epochs=20,
                             lr=1e-2, batch_size=8, hidden=32, forward_batch=4)
TINY_IV = IterativeVectorConfig(episodes=4, update_every=2)
TINY_SV = StateVectorConfig(n_prompts=2, n_demos=4, inner_window=3, momentum_steps=2, val_size=6)
TINY_ATV = GeneratorConfig(hidden=16, steps=6, batch_size=4, per_domain=8, val_size=4, eval_every=3, lr=1e-2)


def tiny_configs(router: str, library: str | None = None, generator: str | None = None) -> dict[str, object]:
    """Configs that build each method on a tiny model in about a second, ICR from the router folder `router`,
    ELICIT from the library file `library` (`library_file`) and ATV from the generator file `generator`
    (`generator_file`); a method not named here builds with its defaults."""
    configs = {"site": TINY_SITE, "task-vector": TINY_TV, "function-vector": TINY_FV, "i2cl": TINY_I2CL,
               "icv": TINY_ICV, "lora": TINY_LORA, "learned-task-vector": TINY_LTV, "icr": ICRConfig(router=router),
               "iterative-vector": TINY_IV, "state-vector": TINY_SV}
    if library is not None:
        configs["elicit"] = ElicitConfig(library=library)
    if generator is not None:
        configs["atv"] = AtvConfig(generator=generator)
    return configs


def library_file(lm, folder: Path) -> str:
    """A small ELICIT library for `lm` (entries sentiment and antonyms, the hashed stand-in encoder) in `folder`."""
    tasks = [builtin_task("sentiment"), builtin_task("antonyms")]
    return str(build_library(lm, tasks, TINY_LIBRARY, hash_encoder).save(Path(folder) / LIBRARY_FILE, lm.fingerprint))


def generator_file(lm, folder: Path) -> str:
    """A small ATV generator for `lm` (domains sentiment and antonyms, the hashed stand-in encoder) in `folder`."""
    tasks = [builtin_task("sentiment"), builtin_task("antonyms")]
    return str(build_generator(lm, tasks, TINY_ATV, hash_encoder).save(Path(folder) / GENERATOR_FILE))


def stand_in_encoders(mp: Any) -> None:
    """Through monkeypatch `mp`: ICR's routers, ELICIT's libraries and ATV's generators embed queries with
    `hash_encoder`, not MiniLM (which the tiny models' routers, libraries and generators were not made with)."""
    for module in (router_module, library_module, generator_module):
        mp.setattr(module, "minilm_encoder", lambda *args, **kw: hash_encoder)


def hash_encoder(texts: list[str]) -> torch.Tensor:
    """A stand-in sentence encoder: hashed character trigrams, 32-d, deterministic."""
    out = torch.zeros(len(texts), 32)
    for i, t in enumerate(texts):
        for j in range(len(t) - 2):
            out[i, int(hashlib.md5(t[j: j + 3].encode()).hexdigest(), 16) % 32] += 1.0
    return torch.nn.functional.normalize(out, dim=-1)


def router_folder(lm, folder: Path) -> str:
    """An untrained router for `lm` saved to `folder` (α = 0: the plain model), built in `lm`'s own dtype."""
    from icr_app.methods.icr.pids import extract_pids
    from icr_app.methods.icr.router import new_router

    pids = extract_pids(lm, [builtin_task("sentiment")], rank=2, n_prompts=3, max_demos=2)
    new_router(lm, pids, 32, layers=[lm.n_layers - 2, lm.n_layers - 1], encoder=hash_encoder).save(folder)
    return str(folder)


def trained_like(lm, pids, seed: int):
    """A router with a non-zero α head, as training leaves it (seeded)."""
    from icr_app.methods.icr.router import new_router

    router = new_router(lm, pids, 32, layers=[2, 3], encoder=hash_encoder, seed=seed)
    torch.nn.init.normal_(router.net.alpha_mlp[-1].weight, std=0.5, generator=torch.Generator().manual_seed(seed))
    return router


def built_from_two_generator_states(build):
    """`build()` run twice, after seeding the global generator with 1 and then with 2 (a fresh process seeds it at
    random); the second run must leave the caller's generator where it found it. Both results, to compare."""
    torch.manual_seed(1)
    first = build()
    torch.manual_seed(2)
    before = torch.get_rng_state()
    second = build()
    assert torch.equal(torch.get_rng_state(), before)
    return first, second


def routing_router(lm):
    """A router whose α head is not zero, so ICR really changes the tiny model's attention, as its state: one per
    model, kept on the model itself (the state holds no reference back, so it goes with the model)."""
    return lm.memoised(("test-routing-router",), lambda: new_routing_router(lm).state())


def new_routing_router(lm):
    """`routing_router` made afresh and kept nowhere (for a model that must be freed)."""
    from icr_app.methods.icr.pids import extract_pids
    from icr_app.methods.icr.router import new_router

    pids = extract_pids(lm, [builtin_task("sentiment"), builtin_task("antonyms")], rank=4, n_prompts=6, max_demos=4)
    r = new_router(lm, pids, 32, layers=[2, 3], encoder=hash_encoder, seed=0)
    torch.nn.init.normal_(r.net.alpha_mlp[-1].weight, std=2.0, generator=torch.Generator().manual_seed(0))
    r.net.alpha_scale.fill_(50.0)  # the tiny random model's attention is flat: push hard enough to move answers
    return r


def no_hooks(lm) -> bool:
    return not any(m._forward_hooks or m._forward_pre_hooks for m in lm.model.modules())


def assert_zero_shot_exactly(method, queries: list[str]) -> list:
    """The method answers exactly as zero-shot with the same answering (prompts, generations, probabilities)."""
    zs = ZeroShotMethod(method.lm, method.answering).predict(queries, batch_size=3)
    same = method.predict(queries, batch_size=3)
    assert [p.prompt for p in same] == [p.prompt for p in zs]
    assert [p.generated for p in same] == [p.generated for p in zs]
    assert [p.label_probs for p in same] == [p.label_probs for p in zs]
    return zs


def cancelling_at(stage: str, step: int = 1):
    """A progress wrapper that stops a job as the app's Cancel does (`Cancelled`), at step `step` (0-based) of the
    loop whose desc is `stage`."""
    def cancel(it, desc="", **_):
        for i, x in enumerate(it):
            if desc == stage and i == step:
                raise Cancelled
            yield x

    return cancel


def tab_show(lm, name: str):
    """The handler method `name`'s tab (its view's) wires to `page.built.change`, from a page holding only that tab."""
    import dataclasses

    import gradio as gr

    from icr_app.app.built_tab import built_method_tab
    from icr_app.app.context import AppContext
    from icr_app.app.page import Page
    from icr_app.methods import REGISTRY

    with gr.Blocks() as demo:  # the tab reads only the built methods and the task events; the rest is filler
        parts = {f.name: gr.State() for f in dataclasses.fields(Page)}
        page = Page(**{**parts, "built": gr.State({}), "task_changed": []})
        built_method_tab(AppContext(lm), page, REGISTRY[name])
    return next(f.fn for f in demo.fns.values() if f.api_name == f"show_{name.replace('-', '_')}")


ROWS = [("good film", "positive"), ("dull plot", "negative")] * 5


def csv_bytes(rows, header="input,output", sep=",") -> bytes:
    return (header + "\n" + "\n".join(f"{x}{sep}{y}" for x, y in rows)).encode()


BAD_UPLOADS = [  # (file name, bytes, the message it must get)
    ("t.csv", b"", "the file is empty"),
    ("t.csv", b"   \n", "the file is empty"),
    ("t.csv", csv_bytes(ROWS, "foo,bar"), "no input column found"),
    ("t.csv", csv_bytes(ROWS, "input,bar"), "no output column found"),
    ("t.csv", csv_bytes([("good", "positive"), ("", "negative"), ("ok", " ")]), r"2 row\(s\) have a blank.*rows 2, 3"),
    ("t.csv", csv_bytes([("good", "positive")]), "at least 2 examples"),
    ("t.csv", csv_bytes([(f"x{i}", "same") for i in range(10)]), "every example has the label 'same'"),
    ("t.csv", "input,output\ncafé,oui\n".encode("latin-1"), "not UTF-8"),
    ("t.json", b"{not json", "malformed JSON"),
    ("t.json", b'{"input": "a"}', "must be a list"),
    ("t.json", b'["a", "b"]', "must be an object"),
    ("t.jsonl", b'{"input": "a", "output": "b"}\n{oops', "line 2"),
    ("t.xlsx", b"PK..", "unsupported file type"),
    ("t.csv", b"input,output\na,b,c\nd,e\n", "more fields than the header"),
]


# Comparing result JSONs across runs: every number but the timings is determined by the seed.
ROOT = Path(__file__).parents[1]
TIMINGS = {"latency_s", "build_s", "latency_ratio_to_zero_shot", "latency_ratio_median", "build_s_median",
           "model"}  # the model: its path differs too


def untimed(data: Any) -> Any:
    """`data` without the timed fields (and the model's path), at any depth."""
    if isinstance(data, dict):
        return {k: untimed(v) for k, v in data.items() if k not in TIMINGS}
    if isinstance(data, list):
        return [untimed(v) for v in data]
    return data


def free_port() -> int:
    """A port no one listens on now: the default 29500 may be another run's on a shared machine."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(args: list[str], processes: int = 2) -> subprocess.CompletedProcess:
    """`accelerate launch` of `python -m icr_app ARGS` as several CPU processes (gloo), from this checkout.
    `--multi_gpu` is what starts several processes: accelerate's `--cpu` alone starts one."""
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", str(processes),
           "--num_machines", "1", "--main_process_port", str(free_port()), "--mixed_precision", "no",
           "--dynamo_backend", "no", "-m", "icr_app", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


def shipped_artefacts(kind: str) -> dict[Path, Any]:
    """Every prebuilt artefact of `kind` the package ships (both built-in models), read and verified, after
    checking that each prebuilt task folder has one."""
    from icr_app.core.artefacts import load_artefact
    from icr_app.prebuilt import PREBUILT

    paths = sorted(PREBUILT.glob(f"*/*/{kind}.safetensors"))
    assert {path.parent for path in paths} == {task for task in PREBUILT.glob("*/*") if task.is_dir()}
    return {path: load_artefact(path, kind) for path in paths}


def requirements_in(path: Path) -> list[Requirement]:
    """A requirements file's requirements, those of the files it includes (`-r FILE`) too."""
    out = []
    for line in (line.split("#")[0].strip() for line in path.read_text().splitlines()):
        if line.startswith("-r "):
            out += requirements_in(path.parent / line.removeprefix("-r ").strip())
        elif line and not line.startswith("-"):
            out.append(Requirement(line))
    return out
