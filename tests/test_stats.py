"""The interval and the paired test against published and hand-computed values."""

from __future__ import annotations

import pytest

from icr_app.stats import paired, paired_comparisons, sign_flip_p, significant, wilson


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


def test_the_sign_flip_test_is_the_enumeration_of_every_sign_pattern():
    """Per-item sums 3, -1, 2, 1 (observed total 5): of the 16 sign patterns, those with |total| >= 5 are
    (+3, ±1, +2, ±1) with the ±1s not both against, and their mirror images: 3 + 3 = 6 of 16."""
    import itertools

    sums = [3, -1, 2, 1]
    count = sum(abs(sum(s * abs(x) for s, x in zip(signs, sums))) >= 5
                for signs in itertools.product([1, -1], repeat=4))
    assert count == 6
    assert sign_flip_p(sums) == pytest.approx(6 / 16)
    assert sign_flip_p([0, 0]) == 1.0


def test_items_named_once_each_give_mcnemar_and_agresti_min_unchanged():
    a = [True, False, True] + [False] * 7
    b = [True, False, False] + [True] * 7
    assert paired(a, b, items=[f"q{i}" for i in range(10)]) == paired(a, b)


def test_an_item_drawn_by_two_seeds_counts_once():
    """Ten items, each scored on two seeds; a beats b on six of them both times. McNemar over the 20 pairs takes
    12 discordant coin flips; by item there are 6, each worth 2 (p = 2 / 2**6), and the interval widens by the
    design effect: every item's two pairs alike doubles the variance."""
    a, b = [True] * 6 + [False] * 4, [False] * 10
    names = [f"q{i}" for i in range(10)]
    pairs = paired(a * 2, b * 2)
    by_item = paired(a * 2, b * 2, items=names * 2)
    assert pairs["p_mcnemar"] == pytest.approx(2 / 2**12) and by_item["p_mcnemar"] == pytest.approx(2 / 2**6)
    assert by_item["diff"] == pairs["diff"] == 0.6
    width = [c["ci95"][1] - c["ci95"][0] for c in (pairs, by_item)]
    assert width[1] == pytest.approx(width[0] * 2**0.5)


def test_an_item_that_goes_each_way_on_two_seeds_is_no_evidence():
    out = paired([True, False], [False, True], items=["q", "q"])
    assert out["diff"] == 0 and out["p_mcnemar"] == 1.0


def test_item_names_must_match_the_pairs():
    with pytest.raises(ValueError, match="1 item names"):
        paired([True, False], [False, False], items=["q"])
