"""bench/icr_protocol.py's table on made-up suite reports: a row per variant and method that ran, the pooled
out-of-domain gains paired item by item, collapses named, and the variants compared only where both ran."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from icr_app.stats import paired

_spec = importlib.util.spec_from_file_location("icr_protocol", Path(__file__).parents[1] / "bench" / "icr_protocol.py")
icr_protocol = importlib.util.module_from_spec(_spec)
sys.modules["icr_protocol"] = icr_protocol
_spec.loader.exec_module(icr_protocol)

PARTS = {"in-domain": ("a",), "near-ood": ("b",), "far-ood": ("c",)}


def report(correct: dict[str, list[bool]], latency: float = 1.5) -> dict:
    """A suite's task JSON, reduced to what the table reads; each method but zero-shot `latency` times as slow."""
    methods = {m: {"accuracy": sum(c) / len(c), "correct": c,
                   "latency_ratio_to_zero_shot": 1.0 if m == "zero-shot" else latency} for m, c in correct.items()}
    return {"methods": methods, "paired": [{"a": m, "b": "zero-shot", **paired(c, correct["zero-shot"])}
                                           for m, c in correct.items() if m != "zero-shot"]}


def run(method: str, hits: dict[str, list[bool]]) -> dict:
    zero = {"a": [True, False, False, False], "b": [True, True, False, False], "c": [False] * 4}
    latency = {"a": 9.0, "b": 1.2, "c": 1.4}  # the median over the out-of-domain sets b and c: 1.30
    return {t: report({"zero-shot": zero[t], method: hits[t]}, latency[t]) for t in zero}


def test_a_row_per_variant_that_ran_and_the_pairs_between_them():
    icr = {"a": [True] * 4, "b": [False] * 4, "c": [True, True, False, False]}
    elicit = {"a": [True, False, False, False], "b": [True, True, True, False], "c": [True, True, True, False]}
    text = icr_protocol.table({"paper-protocol": run("icr", icr), "elicit-protocol": run("elicit", elicit),
                               "atv-protocol": run("atv", icr)}, PARTS)
    rows = {line.split(" | ")[0].strip("| "): line for line in text.splitlines() if line.startswith("| ")}
    assert set(rows) == {"variant", "zero-shot", "ICR, paper-protocol router", "ELICIT, paper-protocol library",
                         "ATV, paper-protocol generator"}
    # ICR: 1.000 in-domain, 0.000 near, 0.500 far; OOD mean over b and c 0.250; b below zero-shot
    assert "| 1.000 | 0.000 | 0.500 | 0.250 | b |" in rows["ICR, paper-protocol router"]
    assert "| 0.250 | 0.750 | 0.750 | 0.750 | none |" in rows["ELICIT, paper-protocol library"]
    assert rows["ELICIT, paper-protocol library"].endswith(" | 1.30 |") and rows["zero-shot"].endswith(" | 1 |")
    pooled = paired(elicit["b"] + elicit["c"], icr["b"] + icr["c"])
    assert f"ELICIT, paper-protocol library − ICR, paper-protocol router: {100 * pooled['diff']:+.1f}" in text
    assert f"ATV, paper-protocol generator − ELICIT, paper-protocol library: {-100 * pooled['diff']:+.1f}" in text
    assert "ATV, paper-protocol generator − ICR, paper-protocol router: +0.0" in text
    assert "shipped" not in text and "random basis" not in text  # pairs only between variants that ran
    alone = icr_protocol.table({"paper-protocol": run("icr", icr)}, PARTS)
    assert "against each other" not in alone


def test_the_pooled_gain_counts_an_item_several_seeds_drew_once():
    """Two seeds drawing the same two items of each out-of-domain set: 8 pairs, 4 items. All right against all
    wrong is p = 2 / 2**8 over the pairs, 2 / 2**4 = 0.125 over the items, which the table must give."""
    zero = [False] * 4
    runs = {"paper-protocol": {t: {**report({"zero-shot": zero, "icr": [True] * 4}), "items": ["x", "y", "x", "y"]}
                               for t in ("a", "b", "c")}}
    row = next(line for line in icr_protocol.table(runs, PARTS).splitlines() if line.startswith("| ICR"))
    assert row.endswith(", p = 0.12 | 1.50 |")  # 0.0078 if each pair counted
