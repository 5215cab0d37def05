"""ICR: routing identity and causality, PIDs, router artefacts, training, and the eval method."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from contextlib import nullcontext

import pytest
import torch
from helpers import built_from_two_generator_states, hash_encoder, no_hooks, trained_like
from safetensors import safe_open
from safetensors.torch import save_file
from tiny import tiny_lm

from icr_app.app.i18n import say
from icr_app.core.artefacts import FORMAT, ArtefactError, ArtefactModelError, checksum
from icr_app.core.attention import ATTENTION, additive_mask
from icr_app.core.prompts import SHOTS, Template
from icr_app.core.scoring import encode, label_set
from icr_app.core.tasks import builtin_task, split
from icr_app.evaluation import evaluate
from icr_app.methods.base import Answering
from icr_app.methods.icr import router as router_module
from icr_app.methods.icr.method import ICRConfig, ICRMethod
from icr_app.methods.icr.pids import PIDs, extract_pids, random_basis
from icr_app.methods.icr.router import (
    ICRRouter,
    RouterEnsemble,
    RouterState,
    ensemble_folders,
    ensemble_routers,
    find_router,
    load_pretrained,
    members,
    new_router,
)
from icr_app.methods.icr.routing import Routes, route_bias, routing
from icr_app.methods.icr.train import TrainConfig, ce_candidates, icr_loss, train_router, training_examples
from icr_app.methods.zero_shot import ZeroShotMethod


def random_routes(lm, batch: int, rope: str, rows: str, alpha_scale: float = 1.0, gamma_scale: float = 1.0,
                  seed: int = 0) -> Routes:
    gen = torch.Generator().manual_seed(seed)
    layers = (2, 3)
    d_q, d_k = lm.n_heads * lm.head_dim, lm.n_kv_heads * lm.head_dim
    u_q = torch.linalg.qr(torch.randn(2, d_q, 4, generator=gen))[0]
    u_k = torch.linalg.qr(torch.randn(2, d_k, 4, generator=gen))[0]
    alpha = alpha_scale * torch.randn(batch, 2, 4, generator=gen)
    gamma = gamma_scale * torch.rand(batch, 2, lm.n_heads, generator=gen)
    return Routes(layers, u_q, u_k, alpha, gamma, rope, rows)  # type: ignore[arg-type]


def forward(lm, enc, intervention=None) -> torch.Tensor:
    """All positions' logits, with `intervention` live (under the model's lock, as the runners do)."""
    with lm.lock, intervention if intervention is not None else nullcontext({}) as extra:
        return lm.model(input_ids=enc.input_ids, attention_mask=enc.attention_mask,
                        position_ids=enc.position_ids, **extra).logits


PROMPTS = ["Input: hot\nOutput:", "Input: a rather longer input sentence\nOutput:", "Input: x\nOutput:"]


@pytest.mark.parametrize("rope", ["pre", "post"])
@pytest.mark.parametrize("rows", ["last", "all"])
@pytest.mark.parametrize("zero", ["alpha", "gamma"])
@torch.no_grad()
def test_zero_bias_is_the_plain_model(lm, rope, rows, zero):
    enc = encode(lm, PROMPTS)
    base = forward(lm, enc)
    routes = random_routes(lm, 3, rope, rows, alpha_scale=0.0 if zero == "alpha" else 1.0,
                           gamma_scale=0.0 if zero == "gamma" else 1.0)
    routed = forward(lm, enc, routing(lm, routes))
    real = enc.attention_mask.bool()
    assert (routed - base)[real].abs().max() <= 1e-6
    assert lm.model.config._attn_implementation == ATTENTION


@pytest.mark.parametrize("rope", ["pre", "post"])
def test_bias_changes_output_keeps_causality_and_trains(lm, rope):
    enc = encode(lm, PROMPTS[:1])
    routes = random_routes(lm, 1, rope, "all", alpha_scale=3.0)
    routes.alpha.requires_grad_(True)
    routes.gamma.requires_grad_(True)
    routed = forward(lm, enc, routing(lm, routes))
    with torch.no_grad():
        base = forward(lm, enc)
    assert (routed[:, -1] - base[:, -1]).abs().max() > 1e-3
    routed[:, -1].logsumexp(-1).sum().backward()
    assert routes.alpha.grad.abs().sum() > 0 and routes.gamma.grad.abs().sum() > 0
    # Changing the last token must not change earlier positions: the causal mask holds with the bias.
    ids = enc.input_ids.clone()
    ids[0, -1] = (ids[0, -1] + 1) % lm.model.config.vocab_size
    with torch.no_grad(), lm.lock, routing(lm, random_routes(lm, 1, rope, "all", alpha_scale=3.0)) as extra:
        other = lm.model(input_ids=ids, attention_mask=enc.attention_mask, position_ids=enc.position_ids,
                         **extra).logits
    assert torch.allclose(other[:, :-1], routed[:, :-1].detach(), atol=1e-5)


def test_additive_mask_from_sdpa_masks():
    """SDPA's mask builder leaves None for plain causal attention (last query row sees every key) and gives
    booleans otherwise; routing adds its bias to the additive form of either."""
    mask = additive_mask(None, torch.zeros(1, 1, 3, 4), torch.zeros(1, 1, 5, 4))
    assert mask.shape == (1, 1, 3, 5)
    assert (mask[0, 0] == 0).tolist() == [[True, True, True, False, False], [True, True, True, True, False],
                                          [True] * 5]
    allowed = torch.tensor([[[[True, False], [True, True]]]])
    assert ((additive_mask(allowed, torch.zeros(1, 1, 2, 4), torch.zeros(1, 1, 2, 4)) == 0) == allowed).all()


def test_routing_is_per_row(lm):
    enc = encode(lm, PROMPTS[:2])
    routes = random_routes(lm, 2, "pre", "last", alpha_scale=3.0)
    routes.alpha[1] = 0.0
    with torch.no_grad():
        base = forward(lm, enc)
        routed = forward(lm, enc, routing(lm, routes))
    assert (routed[0, -1] - base[0, -1]).abs().max() > 1e-3
    assert (routed[1, -1] - base[1, -1]).abs().max() <= 1e-6


@pytest.fixture(scope="module")
def tiny_tasks():
    return [builtin_task("sentiment"), builtin_task("antonyms")]


@pytest.fixture(scope="module")
def pids(lm, tiny_tasks):
    return extract_pids(lm, tiny_tasks, rank=4, n_prompts=6, max_demos=4)


def test_pids_shapes_gqa_and_orthonormal(lm, pids):
    assert pids.u_q.shape == (lm.n_layers, lm.n_heads * lm.head_dim, 4)
    assert pids.u_k.shape == (lm.n_layers, lm.n_kv_heads * lm.head_dim, 4)
    assert lm.n_kv_heads < lm.n_heads
    eye = torch.eye(4).expand(lm.n_layers, 4, 4)
    assert torch.allclose(pids.u_q.transpose(1, 2) @ pids.u_q, eye, atol=1e-5)
    assert torch.allclose(pids.u_k.transpose(1, 2) @ pids.u_k, eye, atol=1e-5)
    assert pids.meta["prompt_counts"] == {"sentiment": 6, "antonyms": 6}
    rnd = random_basis(pids)
    assert rnd.u_q.shape == pids.u_q.shape and not torch.allclose(rnd.u_q, pids.u_q)


def test_pids_json_is_strict_and_a_constant_layer_has_no_energy_share(lm, pids, tmp_path):
    """Layer 0's last-token q is the template's last token in every prompt: centred it is zero, not NaN."""
    pids.save(tmp_path, lm.fingerprint)

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in the PIDs' metadata")

    with safe_open(str(tmp_path / "pids.safetensors"), framework="pt") as f:
        meta = json.loads(f.metadata()["meta"], parse_constant=refuse)
    assert meta["energy_kept_q"][0] is None
    assert all(0 < share <= 1 for share in meta["energy_kept_q"][1:] + meta["energy_kept_k"][1:])


def test_a_nan_in_artefact_json_is_refused_on_load(lm, pids, tmp_path):
    """Refused when read, not when training would save it back much later."""
    path = tmp_path / "pids.safetensors"
    meta = json.dumps(pids.meta).replace("null", "NaN", 1)
    tensors = {"u_q": pids.u_q, "u_k": pids.u_k}
    header = {"format": FORMAT, "kind": "pids", "fingerprint": lm.fingerprint, "sha256": checksum(tensors),
              "meta": meta}
    save_file(tensors, str(path), metadata=header)
    with pytest.raises(ArtefactError, match="holds NaN, which is not valid JSON"):
        PIDs.load(tmp_path, lm)


def test_a_new_router_is_the_same_whatever_the_global_generator(lm, pids):
    """The router's init is seeded (a fresh process seeds the global generator at random), and the caller's
    generator is where it was afterwards."""
    first, second = built_from_two_generator_states(
        lambda: new_router(lm, pids, 32, layers=[2, 3], encoder=hash_encoder, seed=5))
    weights = list(zip(first.net.state_dict().values(), second.net.state_dict().values()))
    assert any(a.abs().sum() > 0 for a, _ in weights) and all(torch.equal(a, b) for a, b in weights)


def test_router_round_trip_and_wrong_model_refused(lm, pids, tmp_path):
    """A router is one stored state (its PIDs, weights and meta): saved and loaded, it routes exactly as before;
    another model's file is refused with the shared error, and so is a file whose parts disagree."""
    router = new_router(lm, pids, 32, layers=[2, 3], encoder=hash_encoder)
    torch.nn.init.normal_(router.net.alpha_mlp[-1].weight, generator=torch.Generator().manual_seed(0))
    path = router.save(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["router.safetensors"]
    again = ICRRouter.load(tmp_path, lm, encoder=hash_encoder)
    texts = ["great film", "terrible"]
    for a, b in zip(router.route(texts), again.route(texts)):
        assert a.shape[0] == 2 and torch.equal(a, b)
    assert again.route(texts)[1].shape == (2, 2, lm.n_heads)
    assert again.meta.layers == [2, 3] and again.meta.encoder == "hash_encoder" and again.pids.meta == pids.meta
    assert RouterState.load(path).n_stored() == sum(p.numel() for p in router.net.parameters()) \
        + pids.u_q.numel() + pids.u_k.numel()
    other = tiny_lm(n_layers=2)
    with pytest.raises(ArtefactModelError, match="was made for model"):  # the file, by its header
        ICRRouter.load(tmp_path, other, encoder=hash_encoder)
    with pytest.raises(ArtefactModelError, match="ICR was built for model") as refused:  # a state in memory
        ICRMethod.of(other, router.state(), Answering.of(other, builtin_task("sentiment")))
    assert refused.value.code == RouterState.OTHER_MODEL
    state = router.state()
    state.meta.layers = [1, 2, 3]  # three routed layers named, weights for two
    state.save(tmp_path / "bad" / "router.safetensors")
    with pytest.raises(ArtefactError, match="inconsistent ICR router file: routed layers"):
        ICRRouter.load(tmp_path / "bad", lm, encoder=hash_encoder)
    with pytest.raises(ValueError, match="reads 32-d embeddings of hash_encoder, the encoder gave 3-d"):
        ICRRouter.load(tmp_path, lm, encoder=lambda texts: torch.zeros(len(texts), 3)).route(texts)


def test_ensemble_bias_is_the_mean_of_the_members_biases():
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 5, 12, generator=gen), torch.randn(2, 5, 6, generator=gen)
    u_q, u_k = torch.randn(12, 3, generator=gen), torch.randn(6, 3, generator=gen)
    alpha, gamma = torch.randn(2, 4, 3, generator=gen), torch.rand(2, 4, 8, generator=gen)
    joint = route_bias(q, k, u_q, u_k, alpha, gamma)
    each = torch.stack([route_bias(q, k, u_q, u_k, alpha[:, m], gamma[:, m]) for m in range(4)])
    assert joint.shape == (2, 8, 5, 5)
    assert torch.allclose(joint, each.mean(0), atol=1e-5)
    assert torch.equal(route_bias(q, k, u_q, u_k, alpha[:, :1], gamma[:, :1]),
                       route_bias(q, k, u_q, u_k, alpha[:, 0], gamma[:, 0]))


def test_ensemble_routes_with_the_mean_bias_in_the_model(lm, pids):
    router, zero = trained_like(lm, pids, 0), new_router(lm, pids, 32, layers=[2, 3], encoder=hash_encoder)
    texts = [p[7:-8] for p in PROMPTS]
    enc = encode(lm, PROMPTS)
    alpha, gamma = router.route(texts)
    with torch.no_grad():
        alone = forward(lm, enc, router.intervention(texts))
        one = forward(lm, enc, ensemble_routers([router]).intervention(texts))
        three = forward(lm, enc, ensemble_routers([router, router, router]).intervention(texts))
        # half the bias: the α of `router` halved
        half = forward(lm, enc, ensemble_routers([router, zero]).intervention(texts))
        halved = forward(lm, enc, routing(lm, router.routes(alpha / 2, gamma)))
    real = enc.attention_mask.bool()
    assert (alone - forward(lm, enc))[real].abs().max() > 1e-3
    for other in (one, three):
        assert (other - alone)[real].abs().max() <= 1e-5
    assert (half - halved)[real].abs().max() <= 1e-5
    assert (half - alone)[real].abs().max() > 1e-4


def test_ensemble_round_trip_figures_and_refusals(lm, pids, tmp_path):
    folders = []
    for seed in (0, 1):
        folders.append(tmp_path / f"seed{seed}")
        trained_like(lm, pids, seed).save(folders[-1])
    joined = ensemble_folders(lm, folders, tmp_path / "ens", encoder=hash_encoder)
    again = ICRRouter.load(tmp_path / "ens", lm, encoder=hash_encoder)
    assert isinstance(again.net, RouterEnsemble) and len(again.net.members) == 2
    assert [m["source"] for m in again.meta.made["ensemble_of"]] == [str(f) for f in folders]
    alpha, gamma = again.route(["great film"])
    assert alpha.shape == (1, 2, 2, 4) and gamma.shape == (1, 2, 2, lm.n_heads)
    assert not torch.equal(alpha[:, 0], alpha[:, 1])
    for a, b in zip(joined.route(["great film"]), (alpha, gamma)):
        assert torch.equal(a, b)
    single = ICRRouter.load(folders[0], lm, encoder=hash_encoder)
    assert torch.equal(single.route(["great film"])[0], alpha[:, 0])
    ensemble_folders(lm, folders, tmp_path / "strong", encoder=hash_encoder, alpha_scale=2.5)
    strong = ICRRouter.load(tmp_path / "strong", lm, encoder=hash_encoder)
    assert strong.state().meta.alpha_scale == 2.5 and torch.allclose(strong.route(["great film"])[0], 2.5 * alpha)
    assert torch.equal(strong.route(["great film"])[1], gamma)
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="finite number >= 0"):
            ensemble_folders(lm, folders, tmp_path / "bad", encoder=hash_encoder, alpha_scale=bad)
    assert not (tmp_path / "bad").exists()
    ensemble_folders(lm, folders[:1], tmp_path / "one", encoder=hash_encoder, alpha_scale=0.5)  # rescale one router
    one = ICRRouter.load(tmp_path / "one", lm, encoder=hash_encoder)
    assert torch.allclose(one.route(["great film"])[0], 0.5 * alpha[:, 0])
    from icr_app.methods.icr.figures import routing_figures

    alpha_fig, gamma_fig = routing_figures(again, say, "great film")
    assert "mean of 2 routers" in alpha_fig.layout.title.text
    assert torch.allclose(torch.tensor(alpha_fig.data[0].z), alpha[0].mean(0))
    other_basis = new_router(lm, random_basis(pids), 32, layers=[2, 3], encoder=hash_encoder)
    with pytest.raises(ValueError, match="share the model, the PIDs"):
        ensemble_routers([single, other_basis])
    with pytest.raises(ValueError, match="share the model, the PIDs"):
        ensemble_routers([single, new_router(lm, pids, 32, layers=[3], encoder=hash_encoder)])
    with pytest.raises(ValueError, match="same MLP sizes"):
        ensemble_routers([single, new_router(lm, pids, 32, layers=[2, 3], hidden=8, encoder=hash_encoder)])
    with pytest.raises(ValueError, match="at least one"):
        ensemble_routers([])


def test_ensemble_cli_joins_folders_and_reports_a_mismatch(lm, pids, tmp_path, monkeypatch, capsys):
    from icr_app import cli
    from icr_app.cli import flags as common
    from icr_app.methods.icr import router

    monkeypatch.setattr(common, "load_model", lambda _name, _options: lm)
    monkeypatch.setattr(router, "minilm_encoder", lambda device: hash_encoder)
    for seed in (0, 1):
        trained_like(lm, pids, seed).save(tmp_path / f"seed{seed}")
    new_router(lm, random_basis(pids), 32, layers=[2, 3], encoder=hash_encoder).save(tmp_path / "random")
    assert cli.main(["icr", "ensemble", "--members", str(tmp_path / "seed0"), str(tmp_path / "seed1"),
                     "--out", str(tmp_path / "ens"), "--alpha-scale", "0.5"]) == 0
    assert "ensemble of 2 routers" in capsys.readouterr().out
    joined = ICRRouter.load(tmp_path / "ens", lm, encoder=hash_encoder)
    assert joined.route(["x"])[0].shape[1] == 2 and joined.state().meta.alpha_scale == 0.5
    assert cli.main(["icr", "ensemble", "--members", str(tmp_path / "seed0"), str(tmp_path / "random"),
                     "--out", str(tmp_path / "bad")]) == 2
    assert "share the model, the PIDs" in capsys.readouterr().err and not (tmp_path / "bad").exists()


def test_untrained_router_is_zero_shot(lm, pids):
    router = new_router(lm, pids, 32, encoder=hash_encoder)
    enc = encode(lm, PROMPTS)
    with torch.no_grad():
        base = forward(lm, enc)
        routed = forward(lm, enc, router.intervention([p[7:-8] for p in PROMPTS]))
    assert (routed - base)[enc.attention_mask.bool()].abs().max() <= 1e-6


def test_training_lowers_loss_resumes_and_serves_eval(sharp_lm, tiny_tasks, tmp_path, monkeypatch):
    lm = sharp_lm
    cfg = TrainConfig(rank=4, layers=[2, 3], pid_prompts=4, max_demos=4, examples_per_domain=16, holdout=8,
                      epochs=8, lr=1e-2, checkpoint_every=2)
    log = tmp_path / "log.jsonl"
    stages: list[str] = []

    def record(it, desc=""):
        stages.append(desc)
        return it

    train_router(lm, tiny_tasks, tmp_path / "a", cfg, hash_encoder, progress=record, log_path=log)
    assert stages == ["PIDs: q/k of ICL prompts", "zero-shot entropies"] + [f"router epoch {e}/8" for e in range(1, 9)]
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    first = sum(r["ce"] for r in rows[:8]) / 8
    last = sum(r["ce"] for r in rows[-8:]) / 8
    assert last < first - 0.1, (first, last)

    class Stop(Exception):
        pass

    def stop_after(n):
        def progress(it, **_):
            for i, x in enumerate(it):
                if i == n:
                    raise Stop
                yield x
        return progress

    with pytest.raises(Stop):
        train_router(lm, tiny_tasks, tmp_path / "b", cfg, hash_encoder, progress=stop_after(5))
    assert no_hooks(lm)
    resumed = train_router(lm, tiny_tasks, tmp_path / "b", cfg, hash_encoder)
    done = ICRRouter.load(tmp_path / "a", lm, encoder=hash_encoder)
    for a, b in zip(done.net.state_dict().values(), resumed.net.state_dict().values()):
        assert torch.allclose(a, b, atol=1e-5)

    # The saved router serves eval: its per-item results are the trained router's own predictions, and on the
    # prompts it was trained on the gold label gets more probability than under zero-shot (it learnt them).
    monkeypatch.setattr(router_module, "minilm_encoder", lambda device: hash_encoder)
    task = tiny_tasks[0]
    report = evaluate(lm, task, ["zero-shot", "icr"], n_test=cfg.holdout, batch_size=4,
                      configs={"icr": ICRConfig(router=str(tmp_path / "a"))})
    assert not report.failed and report.methods["icr"].n == cfg.holdout
    train, test = split(task, cfg.holdout, seed=0, min_train=SHOTS)
    answering = Answering.of(lm, train)
    direct = ICRMethod.of(lm, done.state(), answering).predict(test.inputs, batch_size=4)
    assert report.methods["icr"].correct == [p.prediction == y for p, y in zip(direct, test.outputs)]
    seen = training_examples(lm, [task], cfg, hash_encoder, Template(), lambda it, **_: it).prompts
    trained_on = [e for e in train.examples if Template().zero_shot(e.input) in set(seen)]
    queries = [e.input for e in trained_on]
    gold = {name: sum(p.label_probs[e.output] for p, e in zip(method.predict(queries), trained_on))
            for name, method in (("zero-shot", ZeroShotMethod(lm, answering)),
                                 ("icr", ICRMethod.of(lm, done.state(), answering)))}
    assert len(queries) >= 8 and gold["icr"] > gold["zero-shot"] + 0.02 * len(queries), gold


def test_label_restricted_ce(lm, tiny_tasks):
    """`ce="labels"`: a classification row's CE is the softmax over its label tokens; open rows keep the vocab."""
    sentiment, antonyms = tiny_tasks
    cand = ce_candidates(lm, sentiment, "labels")
    assert cand == tuple(label_set(lm, sentiment.labels).first_ids)
    assert ce_candidates(lm, antonyms, "labels") is None and ce_candidates(lm, sentiment, "vocab") is None
    with pytest.raises(ValueError, match="ce must be"):
        ce_candidates(lm, sentiment, "label")
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(2, lm.model.config.vocab_size, generator=gen)
    target = torch.tensor([cand[1], 7])
    allowed = torch.zeros_like(logits, dtype=torch.bool)
    allowed[0, list(cand)], allowed[1] = True, True
    zeros = torch.zeros(2, 1, 4), torch.zeros(2, 1, lm.n_heads)
    _, parts = icr_loss(logits, target, torch.full((2,), 1e9), *zeros, TrainConfig(), allowed)
    by_hand = (torch.nn.functional.cross_entropy(logits[0, list(cand)], torch.tensor(1))
               + torch.nn.functional.cross_entropy(logits[1], torch.tensor(7))) / 2
    assert parts["ce"] == pytest.approx(by_hand.item(), rel=1e-5)
    _, full = icr_loss(logits, target, torch.full((2,), 1e9), *zeros, TrainConfig())
    assert full["ce"] > parts["ce"]


def test_training_never_sees_the_evaluation_split_whatever_the_seed(lm, tiny_tasks):
    """The router's examples come from evaluate's train split (split_seed), not one drawn with the training seed."""
    task = tiny_tasks[0]
    held_out = {Template().zero_shot(x) for x in split(task, 30, seed=0, min_train=10)[1].inputs}
    drawn = []
    for seed in (0, 7):
        cfg = TrainConfig(examples_per_domain=12, holdout=30, seed=seed)
        prompts = training_examples(lm, [task], cfg, hash_encoder, Template(), lambda it, **_: it).prompts
        assert len(prompts) == 12 and not held_out & set(prompts)
        drawn.append(set(prompts))
    assert drawn[0] != drawn[1]  # the training seed still picks which examples


@pytest.mark.slow
def test_two_processes_train_like_one_with_the_global_batch(lm, tmp_path):
    """`icr train` under a 2-process launch (torchrun, gloo on the CPU: accelerate's multi-process path, as on
    several GPUs) shards the batches and averages the gradients: it matches one process with twice the batch."""
    from safetensors.torch import load_file

    ckpt = tmp_path / "tiny"
    lm.model.save_pretrained(ckpt)
    lm.tokenizer.save_pretrained(ckpt)
    args = ["-m", "icr_app", "icr", "train", "--model", str(ckpt), "--domains", "sentiment", "antonyms", "--rank", "4",
            "--pid-prompts", "4", "--max-demos", "4", "--examples-per-domain", "16", "--holdout", "8", "--epochs", "2",
            "--lr", "1e-2"]
    env = {**os.environ, "ACCELERATE_USE_CPU": "true", "OMP_NUM_THREADS": "1"}
    two = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", *args,
           "--out", str(tmp_path / "two"), "--batch-size", "4"]
    one = [sys.executable, *args, "--out", str(tmp_path / "one"), "--batch-size", "8"]
    for cmd in (two, one):
        subprocess.run(cmd, check=True, env=env, capture_output=True, timeout=300)
    a, b = load_file(tmp_path / "two" / "router.safetensors"), load_file(tmp_path / "one" / "router.safetensors")
    assert a.keys() == b.keys()
    assert a["alpha_w2"].abs().max() > 0.02  # trained away from its zero start
    for k in a:
        torch.testing.assert_close(a[k], b[k], atol=2e-3, rtol=0)


@pytest.mark.slow
def test_real_encoder_and_pretrained_router(real_lm):
    from icr_app.methods.icr.figures import routing_figures

    state = load_pretrained(real_lm)
    router = ICRRouter.of(real_lm, state, state.meta)
    alpha, gamma = router.route(["The film was a delight.", "wallet"])
    n = len(members(router.net))  # the shipped router is an ensemble of seeds (assets/icr/MANIFEST.md)
    assert n == len(state.meta.made["ensemble_of"]) > 1
    assert alpha.shape == (2, n, len(router.layers), router.pids.rank)
    assert gamma.shape == (2, n, len(router.layers), real_lm.n_heads)
    assert router.embed(["x"]).shape == (1, 384)
    alpha_fig, gamma_fig = routing_figures(router, say, "wallet")
    assert len(alpha_fig.data[0].z) == len(router.layers) and len(alpha_fig.data[0].z[0]) == router.pids.rank
    z = gamma_fig.data[0].z  # every layer on the axis (as SITE's map), the unrouted ones blank
    assert len(z) == real_lm.n_layers and all(v != v for v in z[0]) and z[router.layers[0]][0] == z[router.layers[0]][0]


def test_a_folder_of_routers_gives_each_model_its_own_and_says_when_none_is_there(lm, pids, tmp_path, monkeypatch):
    """--icr-router and $ICL_LAB_ROUTERS may name a folder of router folders: the one trained for the model is
    found by its fingerprint; another model is told there is none for it and which models the routers are for."""
    monkeypatch.setattr(router_module, "minilm_encoder", lambda device: hash_encoder)
    routers = tmp_path / "routers"
    new_router(lm, pids, 32, layers=[2, 3], encoder=hash_encoder).save(routers / "tiny")
    assert find_router(lm, routers) == find_router(lm, routers / "tiny") == routers / "tiny"
    task = builtin_task("sentiment")
    rep = evaluate(lm, task, ["zero-shot", "icr"], n_test=3, configs={"icr": ICRConfig(router=str(routers))})
    assert rep.methods["icr"].error is None
    other = tiny_lm(n_layers=2)
    with pytest.raises(ArtefactError, match=re.escape(f"no ICR router for model {other.fingerprint} in {routers} "
                                                      f"(routers there: tiny ({lm.fingerprint}))")):
        find_router(other, routers)
    monkeypatch.setenv("ICL_LAB_ROUTERS", str(routers))
    assert load_pretrained(lm).meta.layers == [2, 3]
    rep = evaluate(other, task, ["zero-shot", "icr"], n_test=3)
    assert "no ICR router for model" in rep.methods["icr"].error and rep.methods["zero-shot"].error is None


def test_a_released_model_is_freed_though_icr_answered_on_it(tmp_path, monkeypatch):
    """The router ICR reads is kept on the model itself (read once per model and folder) and holds no reference
    back to it, so a model its caller drops goes, router and all, even after ICR was built, answered and drew its
    maps on it."""
    import gc
    import weakref

    from icr_app.methods import build_method
    from icr_app.methods.icr.figures import query_maps

    monkeypatch.setattr(router_module, "minilm_encoder", lambda device: hash_encoder)
    lm = tiny_lm()
    pids = extract_pids(lm, [builtin_task("sentiment")], rank=2, n_prompts=3, max_demos=2)
    new_router(lm, pids, 32, layers=[2, 3], encoder=hash_encoder).save(tmp_path)
    task = builtin_task("sentiment")
    method = build_method(lm, task, "icr", ICRConfig(router=str(tmp_path)))
    assert method.predict(task.inputs[:2]) and query_maps(method, task.inputs[0], say)
    assert evaluate(lm, task, ["icr"], n_test=2, configs={"icr": ICRConfig(router=str(tmp_path))}).methods["icr"].n
    assert isinstance(lm._memo[("icr-router", str(tmp_path))], RouterState)  # the cache was used
    alive = weakref.ref(lm), weakref.ref(lm.model)
    gc.collect()
    gc.disable()  # reference counting alone must free it: no cycle through the cache either
    try:
        del lm, method, pids
        freed = [ref() for ref in alive]
    finally:
        gc.enable()
    assert freed == [None, None]


@pytest.mark.parametrize("path", sorted(router_module.PRETRAINED.glob(f"*/{router_module.FILE}")),
                         ids=lambda p: p.parent.name)
def test_a_shipped_router_loads_as_its_manifest_says(path):
    """Each shipped router is one verified file of the current format (checksum, shapes, meta), for the model its
    MANIFEST names, routing the last third of the layers with as many members as it records runs."""
    state = RouterState.load(path)
    manifest = (path.parent / "MANIFEST.md").read_text()
    assert f"Model fingerprint: `{state.fingerprint}`" in manifest and state.fingerprint.startswith(path.parent.name)
    n_members, n_layers = len(state.meta.made["ensemble_of"]), state.u_q.shape[0]
    assert state.meta.layers == router_module.last_third(n_layers) and state.meta.encoder == "all-MiniLM-L6-v2"
    alpha, gamma = state.net(state.meta.alpha_scale)(torch.randn(2, state.alpha_w1.shape[-1]))
    assert alpha.shape == (2, n_members, len(state.meta.layers), state.u_q.shape[-1])
    assert gamma.shape[:3] == (2, n_members, len(state.meta.layers)) and alpha.abs().max() <= 0.8 + 1e-6
