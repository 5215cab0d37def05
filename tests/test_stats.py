"""The interval and the paired test against published and hand-computed values."""

from __future__ import annotations

import pytest

from icr_app.stats import paired, paired_comparisons, significant, wilson


@pytest.mark.parametrize("k, n, lo, hi", [
    # Newcombe (1998), Statistics in Medicine 17:857, Table I, method 3 (Wilson score without continuity correction)
    (81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718),
])
def test_wilson_interval_matches_published_values(k, n, lo, hi):
    assert wilson(k, n) == pytest.approx([lo, hi], abs=5e-5)


def test_wilson_of_no_items_is_none():
    assert wilson(0, 0) is None


def test_mcnemar_on_a_hand_made_table():
    """10 items: both right on 1, both wrong on 1, only a on 1, only b on 7. Exact McNemar: two-sided binomial on
    the 8 discordant items, 2 * P(X <= 1 | 8, 1/2) = 2 * 9 / 256; Agresti-Min: d = -6/12, var = (9 - 36/12)/144."""
    a = [True, False, True] + [False] * 7
    b = [True, False, False] + [True] * 7
    out = paired(a, b)
    assert out["diff"] == pytest.approx(-0.6)
    assert out["p_mcnemar"] == pytest.approx(18 / 256)
    half = 1.959964 * (6 / 144) ** 0.5
    assert out["ci95"] == pytest.approx([-0.5 - half, -0.5 + half], abs=1e-6)
    assert not significant(out)
    assert significant(paired([True] * 6 + [False] * 4, [False] * 6 + [False] * 4))  # 2 / 64 < 0.05


def test_methods_that_never_disagree_are_not_different():
    out = paired([True, False, True], [True, False, True])
    assert out["diff"] == 0 and out["p_mcnemar"] == 1.0
    assert out["ci95"][0] < 0 < out["ci95"][1]  # half a count per cell: no point interval at zero


def test_paired_needs_the_same_items():
    with pytest.raises(ValueError, match="equally long"):
        paired([True], [True, False])


def test_each_method_is_compared_with_zero_shot_and_the_best_other_once():
    correct = {"zero-shot": [True, False, False, True], "few-shot": [True, True, True, False], "x": [False] * 4}
    pairs = [(c["a"], c["b"]) for c in paired_comparisons(correct)]
    assert pairs == [("few-shot", "zero-shot"), ("x", "zero-shot"), ("x", "few-shot")]
