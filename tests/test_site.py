"""SITE on the tiny model: injection semantics, the cached-prefix training path, damaged files, concurrency, the
training objectives and the CLI; one slow check on the real model (α = 0, artefacts and hooks: test_contract.py)."""

import threading
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from tiny import build_state, family_lm

from icr_app.app.i18n import say
from icr_app.cli import main
from icr_app.core.artefacts import ArtefactError
from icr_app.core.prefix import PrefixPool
from icr_app.core.scoring import LabelError, encode, prefill
from icr_app.core.tasks import builtin_task, load_task, make_task, split
from icr_app.core.trace import Trace
from icr_app.evaluation import evaluate
from icr_app.methods import answer_loss
from icr_app.methods.answer_loss import Scorer, accumulate_grad, prompt_examples
from icr_app.methods.base import Answering
from icr_app.methods.site.artefact import load_site, save_site
from icr_app.methods.site.figures import alpha_heatmap
from icr_app.methods.site.inject import inject, mix_at
from icr_app.methods.site.method import SiteConfig, SiteMeta, SiteMethod, SiteState
from icr_app.methods.site.train import train_theta
from icr_app.methods.zero_shot import ZeroShotMethod

TINY = SiteConfig(n_prompts=4, n_demos=2, steps=6, batch_size=4, eval_every=2, patience=2, max_examples=20)


def fake_site(lm, task, alpha: torch.Tensor, seed: int = 0) -> SiteState:
    """A SITE task with random embeddings and a chosen α (θ = logit α, so α = 0 and 1 are exact)."""
    gen = torch.Generator().manual_seed(seed)
    answering = Answering.of(lm, task)
    meta = SiteMeta(
        task=task.name, kind=task.kind, template={"query": answering.template.query, "sep": answering.template.sep},
        labels=list(answering.labels), max_new_tokens=answering.max_new_tokens, n_prompts=0, n_demos=0, steps=0,
        best_step=0, train_loss=0.0, val_loss=0.0, val_accuracy=0.0, build_s=0.0,
    )
    t = torch.randn(lm.n_layers, lm.n_heads, lm.head_dim, generator=gen) * 3
    return SiteState(t=t, theta=torch.logit(alpha.double()).float(), meta=meta, fingerprint=lm.fingerprint)


def o_proj_inputs(lm, prompts: list[str], ctx=None) -> list[torch.Tensor]:
    """Every layer's o_proj input as the layer saw it (after any injecting pre-hook)."""
    seen: list[torch.Tensor] = []
    handles = [m.register_forward_hook(lambda m, args, out: seen.append(args[0].clone())) for m in head_outs(lm)]
    try:
        with torch.no_grad():
            prefill(lm, encode(lm, prompts), intervention=ctx)
    finally:
        for h in handles:
            h.remove()
    return seen


def head_outs(lm) -> list:
    return [lm.adapter.head_out(layer) for layer in range(lm.n_layers)]


def no_hooks_left(lm) -> bool:
    return all(not m._forward_pre_hooks and not m._forward_hooks for m in head_outs(lm))


def test_alpha_one_at_one_head_changes_only_that_slice(lm):
    task = builtin_task("sentiment")
    layer, head, d = 2, 1, lm.head_dim
    alpha = torch.zeros(lm.n_layers, lm.n_heads)
    alpha[layer, head] = 1.0
    site = fake_site(lm, task, alpha)
    prompts = ["Input: a long and rather dull film\nOutput:", "Input: great\nOutput:"]  # different lengths
    plain = o_proj_inputs(lm, prompts)
    injected = o_proj_inputs(lm, prompts, inject(lm, site.t, site.alpha))
    for below in range(layer):
        assert torch.equal(plain[below], injected[below])
    diff = (plain[layer] != injected[layer]).reshape(2, -1, lm.n_heads, d).any(-1)
    expected = torch.zeros_like(diff)
    expected[:, -1, head] = True
    assert torch.equal(diff, expected)
    assert torch.equal(injected[layer][:, -1, head * d:(head + 1) * d], site.t[layer, head].expand(2, d))
    assert not torch.equal(plain[-1], injected[-1])  # later layers do see the change
    assert no_hooks_left(lm)


def test_cached_prefix_matches_full_prompt(lm):
    """Training forwards only the last token over a cached prefix; it must match the full prompt, injected too."""
    prompts = ["Input: happy\nOutput:", "Input: a much longer input sentence here\nOutput:", "Input: x\nOutput:"]
    pool = PrefixPool(lm, prompts, batch_size=2)
    site = fake_site(lm, builtin_task("antonyms"), torch.rand(lm.n_layers, lm.n_heads))
    rows = torch.tensor([2, 0, 1])
    with torch.no_grad():
        full = prefill(lm, encode(lm, [prompts[i] for i in rows]))
        cached = pool.last_logits(rows)
        with lm.lock, inject(lm, site.t, site.alpha):
            full_inj = prefill(lm, encode(lm, [prompts[i] for i in rows]))
            cached_inj = pool.last_logits(rows)
    torch.testing.assert_close(cached, full, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(cached_inj, full_inj, atol=1e-4, rtol=1e-4)
    assert not torch.allclose(full, full_inj)


@pytest.mark.parametrize("name", ["headline-topic", "antonyms"])
def test_build_trains_alpha_and_evaluates(lm, name):
    task = builtin_task(name)
    seen = []

    def progress(it, **_):
        seen.append(len(it))
        return it

    site = build_state(lm, task, "site", TINY, progress=progress)
    assert site.t.shape == (lm.n_layers, lm.n_heads, lm.head_dim) and site.theta.shape == (lm.n_layers, lm.n_heads)
    assert seen == [1, TINY.steps]  # stage-1 batches, then the training steps
    m = site.meta
    assert m.kind == task.kind and site.fingerprint == lm.fingerprint and 0 <= m.best_step <= m.steps <= TINY.steps
    assert torch.isfinite(torch.tensor([m.train_loss, m.val_loss])).all()
    assert (m.labels == task.labels) == (task.kind == "classification")
    rep = evaluate(lm, task, ["zero-shot", "site"], n_test=6, seed=0, shots=2,
                   configs={"site": replace(TINY, steps=2, n_prompts=2, n_demos=2)})
    assert not rep.failed
    assert rep.methods["site"].n == 6 and rep.methods["site"].latency_ratio_to_zero_shot > 0
    assert no_hooks_left(lm)


def test_training_lowers_the_loss_on_a_learnable_task(lm):
    """With embeddings from the task itself, α should move to cut the held-out first-token loss."""
    cfg = SiteConfig(n_prompts=8, n_demos=3, steps=30, batch_size=8, eval_every=5, patience=10, max_examples=48)
    site = build_state(lm, builtin_task("sentiment"), "site", cfg)
    zero = build_state(lm, builtin_task("sentiment"), "site", replace(cfg, steps=0))
    assert site.meta.val_loss < zero.meta.val_loss
    assert not torch.equal(site.theta, torch.zeros_like(site.theta))


def test_alpha_heatmap_draws_each_head_weight(lm):
    site = fake_site(lm, builtin_task("sentiment"), torch.rand(lm.n_layers, lm.n_heads))
    assert [list(row) for row in alpha_heatmap(site, say).data[0].z] == site.alpha.tolist()


def test_corrupted_and_truncated_files_are_refused(lm, tmp_path):
    path = save_site(fake_site(lm, builtin_task("sentiment"), torch.rand(lm.n_layers, lm.n_heads)), tmp_path / "a")
    data = path.read_bytes()
    cases = {
        "truncated": data[: len(data) // 2],
        "header cut": data[:20],
        "empty": b"",
        "bit flip in tensors": data[:-10] + bytes([data[-10] ^ 1]) + data[-9:],
        "garbage": b"not a safetensors file at all" * 10,
    }
    for name, blob in cases.items():
        bad = tmp_path / f"{name}.safetensors"
        bad.write_bytes(blob)
        with pytest.raises(ArtefactError):
            load_site(bad, lm)
    with pytest.raises(ArtefactError, match="no such file"):
        load_site(tmp_path / "missing.safetensors")


def test_two_tasks_from_two_threads_match_sequential(lm):
    tasks = [builtin_task("sentiment"), builtin_task("antonyms")]
    methods = [SiteMethod(lm, fake_site(lm, t, torch.rand(lm.n_layers, lm.n_heads), seed=i))
               for i, t in enumerate(tasks)]
    queries = [t.inputs[:12] for t in tasks]
    expected = [[(p.generated, p.label_probs) for p in m.predict(q, batch_size=2)] for m, q in zip(methods, queries)]
    got: list = [None, None]
    barrier = threading.Barrier(2)

    def run(i: int) -> None:
        barrier.wait()
        got[i] = [[(p.generated, p.label_probs) for p in methods[i].predict(queries[i], batch_size=2)]
                  for _ in range(3)]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert got == [[e] * 3 for e in expected]
    assert no_hooks_left(lm)


def test_cli_build_site(tiny_checkpoint, tmp_path, capsys):
    out = tmp_path / "sent.safetensors"
    assert main(["build", "--method", "site", "--data", "sentiment", "--out", str(out), "--model", tiny_checkpoint,
                 "--site-prompts", "2", "--site-demos", "2", "--site-steps", "2"]) == 0
    site = load_site(out)
    assert (site.meta.n_prompts, site.meta.n_demos, site.meta.steps) == (2, 2, 2)
    assert "site built from sentiment" in capsys.readouterr().out


def test_paper_preset_and_flags():
    from icr_app.cli import build_parser
    from icr_app.cli.flags import method_config

    def config(entry: str, *flags: str) -> SiteConfig:
        return method_config(build_parser().parse_args(["eval", "--data", "x", "--methods", entry, *flags]), entry)

    paper = config("site@paper")
    assert (paper.n_prompts, paper.n_demos, paper.steps, paper.batch_size) == (50, 10, 400, 1)
    assert config("site@paper", "--site-steps", "30").steps == 30 and config("site").steps == SiteConfig().steps
    assert config("site", "--site-prompts", "5").n_prompts == 5


@pytest.mark.slow
def test_real_model_alpha_zero_and_cached_prefix(real_lm):
    task = builtin_task("sentiment")
    site = fake_site(real_lm, task, torch.zeros(real_lm.n_layers, real_lm.n_heads))
    prompts = [ZeroShotMethod(real_lm, Answering.of(real_lm, task)).prompt(x) for x in task.inputs[:4]]
    with torch.no_grad():
        plain = prefill(real_lm, encode(real_lm, prompts))
        assert torch.equal(prefill(real_lm, encode(real_lm, prompts), intervention=inject(real_lm, site.t,
                                                                                           site.alpha)), plain)
        torch.testing.assert_close(PrefixPool(real_lm, prompts).last_logits(torch.arange(4)), plain,
                                   atol=1e-3, rtol=1e-4)


MONTHS = Path(__file__).parents[1] / "bench" / "tasks" / "month-number.json"


def test_shared_first_token_labels_build_with_the_answer_objective_and_not_the_first_token_one(lm):
    """Labels 1-12 share first tokens (" 1" starts " 10"): the whole-answer objective builds on them and α = 0 is
    still zero-shot exactly; the paper's first-token objective refuses them, clearly."""
    task = load_task(MONTHS)
    train, test = split(task, 8, seed=0)
    answering = Answering.of(lm, train, labels=task.labels)
    assert not SiteMethod(lm, fake_site(lm, train, torch.zeros(lm.n_layers, lm.n_heads))).label_set.first_token_unique
    cfg = SiteConfig(n_prompts=4, n_demos=3, steps=4, batch_size=8, eval_every=2, patience=2, max_examples=40)
    site = build_state(lm, train, "site", cfg, answering=answering)
    assert site.meta.objective == "answer" and site.theta.shape == (lm.n_layers, lm.n_heads)
    zs = ZeroShotMethod(lm, Answering.of(lm, train)).predict(test.inputs, batch_size=3)  # the fake task's label order
    off = SiteMethod(lm, fake_site(lm, train, torch.zeros(lm.n_layers, lm.n_heads))).predict(test.inputs, batch_size=3)
    assert [p.label_probs for p in off] == [p.label_probs for p in zs]
    with pytest.raises(LabelError, match="share their first token"):
        build_state(lm, train, "site", replace(cfg, objective="first-token"), answering=answering)


RENAMED = {"sports": "new york", "business": "new jersey", "science": "boston", "politics": "boston red sox"}


def _whole_answer_setup(lm, kind: str):
    """24 training prompts, the whole-answer scorer and a task embedding: labels that share first tokens (one a
    prefix of another), or an open task's multi-token answers."""
    if kind == "shared first tokens":
        topics = builtin_task("headline-topic")
        task = make_task("renamed", [(e.input, RENAMED[e.output]) for e in topics.examples])
    else:
        task = builtin_task("antonyms")
    base = SiteMethod(lm, fake_site(lm, task, torch.zeros(lm.n_layers, lm.n_heads)))
    examples = prompt_examples(lm, base, list(task.examples[:24]))
    ls = base.label_set
    scorer = Scorer("answer", None if ls is None else torch.tensor(ls.first_ids),
                    None if ls is None else list(ls.scored_ids))
    return examples, scorer, fake_site(lm, task, torch.zeros(lm.n_layers, lm.n_heads)).t


@pytest.mark.parametrize("kind", ["shared first tokens", "multi-token open answers"])
def test_the_whole_answer_objective_lowers_its_loss(lm, kind):
    """Fitted and validated on the same prompts, the whole-answer loss falls from α = 0.5."""
    examples, scorer, t = _whole_answer_setup(lm, kind)
    _, stats = train_theta(lm, t, examples, examples, scorer, steps=30, batch_size=8, lr=0.2, eval_every=5,
                           patience=10, seed=0)
    with torch.no_grad(), lm.lock, inject(lm, t, torch.full((lm.n_layers, lm.n_heads), 0.5), position=0):
        start, _ = scorer.loss(examples, torch.arange(24))
    assert stats.val_loss < float(start) - 0.05, (float(start), stats.val_loss)


@pytest.mark.parametrize("kind", ["shared first tokens", "multi-token open answers"])
def test_a_batch_split_into_passes_has_the_whole_batchs_loss_and_gradient(lm, kind, monkeypatch):
    """The batch's gradient accumulated pass by pass (one row per pass under a tiny token budget) is the gradient
    of the whole batch's mean loss in one pass."""
    examples, scorer, t = _whole_answer_setup(lm, kind)
    rows = torch.arange(8)
    theta = torch.randn(lm.n_layers, lm.n_heads, generator=torch.Generator().manual_seed(0)).requires_grad_()

    def loss_and_grad() -> tuple[float, torch.Tensor]:
        theta.grad = None
        loss = accumulate_grad(scorer, examples, rows, lambda: inject(lm, t, torch.sigmoid(theta), position=0),
                               [theta])
        return loss, theta.grad.clone()

    assert len(scorer.passes(examples, rows)) == 1
    whole = loss_and_grad()
    monkeypatch.setattr(answer_loss, "STEP_TOKENS_PER_PASS", 1)
    assert len(scorer.passes(examples, rows)) == 8
    split_up = loss_and_grad()
    assert whole[1].abs().max() > 1e-4
    assert abs(split_up[0] - whole[0]) < 1e-5
    torch.testing.assert_close(split_up[1], whole[1], atol=1e-6, rtol=1e-4)


def test_the_whole_answer_objective_is_the_first_token_one_where_first_tokens_decide(lm):
    """Labels with distinct first tokens are scored by those tokens alone, so "answer" trains on exactly that
    loss (and at its cost); labels that share a first token are compared by their full sequences."""
    task = builtin_task("sentiment")
    base = SiteMethod(lm, fake_site(lm, task, torch.zeros(lm.n_layers, lm.n_heads)))
    examples = prompt_examples(lm, base, list(task.examples[:8]))
    first = torch.tensor(base.label_set.first_ids)
    scorers = [Scorer(obj, first, list(base.label_set.scored_ids)) for obj in ("answer", "first-token")]
    t = fake_site(lm, task, torch.zeros(lm.n_layers, lm.n_heads)).t
    with torch.no_grad(), lm.lock, inject(lm, t, torch.full((lm.n_layers, lm.n_heads), 0.5), position=0):
        answer, first_token = (float(sc.loss(examples, torch.arange(8))[0]) for sc in scorers)
        shared = Scorer("answer", torch.tensor([first[0], first[0]]), list(base.label_set.scored_ids))
        full = float(shared.loss(examples, torch.arange(8))[0])
    assert scorers[0].first_tokens_decide and not shared.first_tokens_decide
    assert answer == first_token and abs(full - answer) > 1e-4


@pytest.mark.parametrize("family", ["llama", "gemma3"])
def test_the_label_trie_pass_equals_one_row_per_label(family):
    """Labels sharing prefixes ("new york" / "new jersey", "boston" / "boston red sox") scored through their
    prefix trie in one pass per row give the same log-likelihoods, with the injection, as running each label
    on its own copy of the row; Gemma-3's sliding window takes the per-label path when the trie would not fit."""
    flm = family_lm(family)
    topics = builtin_task("headline-topic")
    task = make_task("renamed", [(e.input, RENAMED[e.output]) for e in topics.examples])
    base = SiteMethod(flm, fake_site(flm, task, torch.zeros(flm.n_layers, flm.n_heads)))
    examples = prompt_examples(flm, base, list(task.examples[:6]))
    seqs = tuple(base.label_set.scored_ids)
    t = torch.randn(flm.n_layers, flm.n_heads, flm.head_dim)
    rows = torch.tensor([0, 3, 5])
    with torch.no_grad(), flm.lock, inject(flm, t, torch.full((flm.n_layers, flm.n_heads), 0.7), position=0):
        trie = examples.pool.label_logprobs(rows, seqs)
        each, _ = examples.pool.sequence_logprobs(rows, [seqs] * len(rows))
    torch.testing.assert_close(trie, each, atol=1e-4, rtol=1e-4)


def test_sequence_logprobs_match_the_full_prompt_with_injection(lm):
    """The cached-prefix pass with answer tokens after the injected last token equals scoring the full prompt
    plus answer in one plain forward pass with the injection at the last prompt token."""
    prompts = ["Input: happy\nOutput:", "Input: a much longer input sentence here\nOutput:"]
    answers = [tuple(lm.tokenizer(" sad face", add_special_tokens=False)["input_ids"]),
               tuple(lm.tokenizer(" short", add_special_tokens=False)["input_ids"])]
    site = fake_site(lm, builtin_task("antonyms"), torch.rand(lm.n_layers, lm.n_heads))
    pool = PrefixPool(lm, prompts)
    with torch.no_grad(), lm.lock, inject(lm, site.t, site.alpha, position=0):
        got, _ = pool.sequence_logprobs(torch.arange(2), [[a] for a in answers])
    for i, (prompt, ans) in enumerate(zip(prompts, answers)):
        ids = lm.tokenizer(prompt)["input_ids"]
        full = torch.tensor([ids + list(ans)])
        at = len(ids) - 1  # the last prompt token's position in the full sequence

        def edit(layer, x, at=at):
            return torch.cat([x[:, :at], mix_at(x[:, at:at + 1], site.t[layer], site.alpha[layer], 0),
                              x[:, at + 1:]], 1)

        targets = {layer: lm.adapter.head_out(layer) for layer in range(lm.n_layers)}
        with torch.no_grad(), lm.lock, Trace(targets, edit_input=edit):
            logp = torch.log_softmax(lm.model(input_ids=full).logits[0].float(), -1)
        ref = sum(logp[at + j, t].item() for j, t in enumerate(ans))
        assert got[i, 0].item() == pytest.approx(ref, abs=1e-4)


def test_decode_time_injection_is_off_by_default_and_touches_every_generated_token(lm):
    task = builtin_task("antonyms")
    train, test = split(task, 4, seed=0)
    site = fake_site(lm, train, torch.full((lm.n_layers, lm.n_heads), 0.9))
    once, every = SiteMethod(lm, site), SiteMethod(lm, site, decode_inject=True)
    seen: list[int] = []
    layer0 = lm.adapter.head_out(0)
    handle = layer0.register_forward_pre_hook(lambda m, args: seen.append(args[0].shape[1]))
    try:
        a = once.predict(test.inputs[:1])
        n_once = len(seen)
        b = every.predict(test.inputs[:1])
    finally:
        handle.remove()
    assert a[0].generated != b[0].generated or a[0].first_token == b[0].first_token  # same prefill, then apart
    assert a[0].first_token == b[0].first_token  # the prefill is injected once either way
    zero = fake_site(lm, train, torch.zeros(lm.n_layers, lm.n_heads))
    assert [p.generated for p in SiteMethod(lm, zero, decode_inject=True).predict(test.inputs)] == \
        [p.generated for p in ZeroShotMethod(lm, Answering.of(lm, train)).predict(test.inputs)]
    assert n_once > 1 and len(seen) == 2 * n_once and no_hooks_left(lm)
