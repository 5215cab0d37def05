"""bench/paired_by_item.py: the pooled comparison with each distinct item counted once, on answers written by hand."""

import importlib.util
from pathlib import Path

import pytest

_path = Path(__file__).parents[1] / "bench" / "paired_by_item.py"
_spec = importlib.util.spec_from_file_location("paired_by_item", _path)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_an_item_drawn_by_two_seeds_counts_once():
    # ten items, each drawn by both seeds; a gets all right and b all wrong, twice over
    items = [("cb", f"claim {i}", "true") for i in range(10)] * 2
    a = [(item, True) for item in items]
    b = [(item, False) for item in items]
    r = bench.by_item(a, b, resamples=20000)
    assert (r["pairs"], r["items"], r["points"]) == (20, 10, 100.0)
    assert r["p_pooled"] == pytest.approx(2 / 2**20)  # McNemar takes 20 discordant pairs as 20 coin flips
    assert r["p_by_item"] == pytest.approx(2 / 2**10)  # by item: 10 flips (exact, as 2**10 < the resamples)


def test_items_that_differ_cancel_within_the_item():
    # one item right for a on seed 0 and for b on seed 1: no evidence either way once it is one item
    item = ("copa", "premise", "A")
    r = bench.by_item([(item, True), (item, False)], [(item, False), (item, True)], resamples=100)
    assert (r["items"], r["points"], r["p_by_item"]) == (1, 0.0, 1.0)


def test_zero_shot_disagreeing_with_itself_means_the_items_were_matched_wrongly():
    bench.check_items([(("cb", "x", "true"), True), (("cb", "y", "false"), False), (("cb", "x", "true"), True)])
    with pytest.raises(ValueError, match="zero-shot differs between seeds on cb"):
        bench.check_items([(("cb", "x", "true"), True), (("cb", "x", "true"), False)])

