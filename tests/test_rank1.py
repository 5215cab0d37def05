"""The rank-1 analysis: the identity, the patch's shape, and that nothing leaks into the shared model."""

import json

import pytest
import torch
from helpers import no_hooks
from tiny import family_lm

from icr_app import cli
from icr_app.analyses.rank1.analysis import (
    Rank1Patch,
    Rank1Setup,
    as_dtype,
    make_patch,
    patched_output,
    query_states,
    rank1_analysis,
)
from icr_app.analyses.rank1.figures import (
    error_by_layer_figure,
    norm_vs_demos_figure,
    singular_values_figure,
    transfer_figure,
)
from icr_app.app.i18n import say
from icr_app.core.prompts import Template
from icr_app.core.tasks import builtin_task, load_task


@pytest.fixture(scope="module")
def report(lm):
    return rank1_analysis(lm, builtin_task("sentiment"), shots=3, n_transfer=2)


@pytest.fixture(scope="module")
def setup():
    return Rank1Setup(builtin_task("antonyms"), Template(), shots=3, n_transfer=1, seed=1)


def test_identity_holds_at_every_layer_in_fp32(lm, report):
    assert report.layers == list(range(lm.n_layers))
    assert max(report.max_abs_error) <= 1e-5
    assert max(report.max_ulp_error) <= 4  # rounding level, not just small because the toy outputs are small
    for err, gap in zip(report.max_abs_error, report.unpatched_error):
        assert gap > 1000 * max(err, 1e-12)  # the patch closes a real gap


def test_patch_maps_context_free_input_to_context_input(lm, setup):
    ctx, free = query_states(lm, setup, setup.query)
    for layer in range(lm.n_layers):
        patch = make_patch(lm, layer, ctx, free)
        mlp = lm.layers[layer].mlp
        assert set(patch.u) == {"gate", "up"}
        for proj, w in (("gate", mlp.gate_proj.weight), ("up", mlp.up_proj.weight)):
            assert torch.allclose((w + patch.delta(proj)) @ free.mlp_in[layer], w @ ctx.mlp_in[layer], atol=1e-6)
            assert torch.linalg.matrix_rank(patch.delta(proj)) == 1  # fp32 tolerance: rounding is no rank
            assert patch.norm(proj) == pytest.approx(float(torch.linalg.norm(patch.delta(proj))), rel=1e-5)


def test_singular_values_show_rank_one(report):
    assert set(report.sigma) == {"gate", "up"}
    for sig in report.sigma["gate"] + report.sigma["up"]:
        assert sig[0] > 0 and sig[1] / sig[0] < 1e-5


def test_zero_patch_rerun_is_exact_and_weights_are_untouched(lm, setup):
    ctx, free = query_states(lm, setup, setup.query)
    before = {n: p.clone() for n, p in lm.model.named_parameters()}
    for layer in range(lm.n_layers):
        real = make_patch(lm, layer, ctx, free)
        zero = Rank1Patch(layer, real.a0, {k: torch.zeros_like(v) for k, v in real.u.items()},
                          torch.zeros_like(real.dh))
        assert torch.equal(patched_output(lm, free, zero), free.out[layer])
        patched_output(lm, free, real)
    assert all(torch.equal(p, before[n]) for n, p in lm.model.named_parameters())
    assert no_hooks(lm)


def test_demo_sweep_starts_at_zero_and_grows(report):
    sw = report.sweep
    assert sw.n_demos == [0, 1, 2, 3]
    gate, up = sw.delta_norm["gate"], sw.delta_norm["up"]
    assert all(v == 0 for v in gate[0] + up[0] + sw.dh_norm[0])
    assert all(v > 0 for row in gate[1:] + up[1:] + sw.dh_norm[1:] for v in row)


def test_patch_does_not_transfer_to_another_query(report):
    tr = report.transfer
    assert len(tr.queries) == 2 and report.query not in tr.queries
    assert max(tr.own_error) <= 1e-5
    for own, moved, none in zip(tr.own_error, tr.transfer_error, tr.unpatched_error):
        assert moved > 1000 * max(own, 1e-12)
        assert moved > 0.1 * none  # it does not close the other query's gap


def test_identity_holds_for_gemma3_blocks():
    """Gemma-3 norms the attention and MLP outputs and alternates sliding and global attention per block."""
    gemma = family_lm("gemma3", n_layers=2)
    rep = rank1_analysis(gemma, builtin_task("sentiment"), shots=3, n_transfer=1)
    assert max(rep.max_abs_error) <= 1e-5 and max(rep.max_ulp_error) <= 4
    assert rep.unpatched_error[1] > 1000 * rep.max_abs_error[1]  # the global block sees the demonstrations


def test_float64_copy_makes_the_identity_exact_to_rounding(lm):
    lm64 = as_dtype(lm, torch.float64)
    assert lm64.model is not lm.model and lm.model.dtype == torch.float32
    rep = rank1_analysis(lm64, builtin_task("sentiment"), layer=2, shots=2, n_transfer=1)
    assert rep.max_abs_error[0] < 1e-12


def test_cancel_through_progress_leavesno_hooks(lm):
    def cancel(_it):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        rank1_analysis(lm, builtin_task("sentiment"), shots=2, n_transfer=1, progress=cancel)
    assert no_hooks(lm)


def test_bad_arguments_are_refused(lm):
    task = builtin_task("sentiment")
    with pytest.raises(ValueError, match="out of range"):
        rank1_analysis(lm, task, layer=lm.n_layers)
    with pytest.raises(ValueError, match="shots"):
        rank1_analysis(lm, task, shots=0)


def test_figures_build(report):
    layer = report.layers[-1]
    figs = [singular_values_figure(report, say, layer), norm_vs_demos_figure(report, say, layer),
            error_by_layer_figure(report, say), transfer_figure(report, say)]
    assert [len(f.data) for f in figs] == [2, 3, 2, 3]
    with pytest.raises(ValueError, match="not checked"):
        singular_values_figure(report, say, 99)


def test_cli_writes_per_layer_errors(lm, tiny_checkpoint, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert cli.main(["rank1", "--data", "sentiment", "--model", tiny_checkpoint, "--shots", "2", "--n-transfer", "1",
                     "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["layers"] == list(range(lm.n_layers)) and len(data["max_abs_error"]) == lm.n_layers
    assert "max over layers" in capsys.readouterr().out
    assert cli.main(["rank1", "--data", "sentiment", "--model", tiny_checkpoint, "--layer", "1", "--shots", "2",
                     "--n-transfer", "1", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["layers"] == [1] and len(data["max_abs_error"]) == 1


@pytest.mark.slow
@pytest.mark.needs_data("fv")
def test_real_model_identity_within_1e4(real_lm, fv_data):
    setup = Rank1Setup(load_task(fv_data / "sentiment.json"), Template(), shots=3, n_transfer=1, seed=0)
    ctx, free = query_states(real_lm, setup, setup.query)
    for layer in (0, real_lm.n_layers // 2, real_lm.n_layers - 2):
        err = patched_output(real_lm, free, make_patch(real_lm, layer, ctx, free)) - ctx.out[layer]
        assert float(err.abs().max()) <= 1e-4


def test_a_layer_without_update_reads_as_such_in_the_table_the_json_and_the_tab(tmp_path, capsys):
    """GPT-NeoX's first MLP reads the query token's embedding alone (parallel residual), so its ΔW is zero:
    σ₂/σ₁ is undefined there, which the table prints as "-", the JSON as null and the tab explains."""
    from icr_app.app.tabs.rank1 import figures

    neox = family_lm("gpt_neox")
    path = tmp_path / "neox"
    neox.model.save_pretrained(path)
    neox.tokenizer.save_pretrained(path)
    out = tmp_path / "r.json"
    assert cli.main(["rank1", "--data", "sentiment", "--model", str(path), "--shots", "2", "--n-transfer", "1",
                     "--json", str(out)]) == 0
    table = capsys.readouterr().out
    row0 = next(line for line in table.splitlines() if line.split() and line.split()[0] == "0")
    assert row0.split()[5] == "-"
    assert "no update at layer 0" in table
    data = json.loads(out.read_text())
    assert data["sigma"]["fc"][0][0] == 0.0 and data["sigma_ratio"]["fc"][0] is None
    assert data["no_update_layers"] == [0]
    assert all(r is not None for r in data["sigma_ratio"]["fc"][1:])  # later layers do see the context
    *figs, note = figures({"rank1": data}, 0)
    assert "Layer 0: no update" in note and "GPT-NeoX" in note
    assert "no update" in figs[1].data[0].name
    assert figures({"rank1": data}, 2)[4] == note  # the note is about the report, whichever layer is detailed
