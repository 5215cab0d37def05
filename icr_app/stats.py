"""The statistics every reported accuracy carries: a Wilson interval, and paired comparisons on the same items.

Accuracies here are proportions of items right, so an interval is a binomial one (Wilson: sound at small n and
near 0 or 1, where the normal approximation is not). Two methods scored on the same items are compared on the
items where they disagree (exact McNemar); their difference gets the Agresti-Min interval for paired
proportions (Wald on the 2x2 table with half a count added to each cell, which keeps its coverage near 95% at
the sizes `eval` runs, and does not shrink to a point when the two methods never disagree).

Pooled over seeds, one item can be scored more than once (a test split no larger than n_test gives every seed
the same items; larger ones overlap), and its answers are not independent draws. Given the item behind each pair,
the test takes each item's summed difference as one unit and flips its sign (exact, over every sign pattern),
which is McNemar's test again when every item appears once; the interval is widened by the design effect, the
ratio of the item-clustered variance of the difference to the pairwise one (1 when every item appears once).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from typing import TypedDict

import numpy as np
from scipy.stats import binom, binomtest, norm

LEVEL = 0.95


def wilson(k: int, n: int) -> list[float] | None:
    """95% Wilson interval of k successes out of n (None when there are no items)."""
    if n == 0:
        return None
    ci = binomtest(k, n).proportion_ci(confidence_level=LEVEL, method="wilson")
    return [float(ci.low), float(ci.high)]


def sign_flip_p(sums: Sequence[int]) -> float:
    """Two-sided exact p of the sign-flip test on integer per-item sums: P(|T| >= |t|) where T = Σ ±|s| with
    every sign pattern equally likely. Items of one size contribute size × (2·Binomial(count, 1/2) − count); the
    null distribution is their convolution (sums of positive terms only, so tail probabilities keep their
    relative precision far below 1e-16)."""
    sizes = Counter(abs(int(x)) for x in sums if x)
    if not sizes:
        return 1.0
    if set(sizes) == {1}:  # McNemar's exact binomial test; scipy's gives the same value without the arrays
        return float(binomtest(sum(x > 0 for x in sums), sizes[1]).pvalue)
    null = np.ones(1)
    for size, count in sizes.items():
        term = np.zeros(2 * size * count + 1)
        term[:: 2 * size] = binom.pmf(np.arange(count + 1), count, 0.5)
        null = np.convolve(null, term)
    t = abs(int(sum(sums)))
    half = (len(null) - 1) // 2  # null[i] is P(T = i - half)
    return float(min(1.0, null[: half - t + 1].sum() + null[half + t:].sum()))


class Paired(TypedDict):
    """`paired`'s answer: a's accuracy minus b's, its 95% interval and the exact McNemar p-value."""

    diff: float
    ci95: list[float]
    p_mcnemar: float


def paired(a: Sequence[bool], b: Sequence[bool], items: Sequence[Hashable] | None = None) -> Paired:
    """Accuracy of `a` minus that of `b` on the same items, its 95% interval and the exact McNemar p-value.
    `items` names the item behind each pair, where one item may be scored more than once (see the module)."""
    if len(a) != len(b) or not a or (items is not None and len(items) != len(a)):
        raise ValueError(f"paired comparison needs two equally long, non-empty lists ({len(a)} and {len(b)} items"
                         + (f", {len(items)} item names)" if items is not None else ")"))
    n = len(a)
    d = [int(x) - int(y) for x, y in zip(a, b)]
    only_a, only_b = d.count(1), d.count(-1)
    sums: dict[Hashable, int] = {}
    for key, x in zip(items if items is not None else range(n), d):
        sums[key] = sums.get(key, 0) + x
    p = sign_flip_p(list(sums.values()))
    # Agresti-Min: half a count in each of the four cells; the discordant gap stays, the total grows by 2
    m = n + 2
    mid = (only_a - only_b) / m
    var = ((only_a + only_b + 1) - (only_a - only_b) ** 2 / m) / m**2
    half = float(norm.ppf(0.5 + LEVEL / 2)) * (var * design_effect(d, items)) ** 0.5
    return {"diff": (only_a - only_b) / n, "ci95": [max(-1.0, mid - half), min(1.0, mid + half)],
            "p_mcnemar": float(p)}


def design_effect(d: list[int], items: Sequence[Hashable] | None) -> float:
    """Variance of the mean difference with each item's pairs as one cluster, over that with every pair
    independent (1 without item names, when every item appears once, or when the methods never disagree)."""
    if items is None or len(set(items)) == len(items):
        return 1.0
    mean = sum(d) / len(d)
    pairwise = sum((x - mean) ** 2 for x in d)
    residual: dict[Hashable, float] = {}
    for key, x in zip(items, d):
        residual[key] = residual.get(key, 0.0) + x - mean
    return sum(r * r for r in residual.values()) / pairwise if pairwise else 1.0


def significant(comparison: dict) -> bool:
    return comparison["p_mcnemar"] < 1 - LEVEL


def paired_comparisons(correct: dict[str, list[bool]], base: str = "zero-shot",
                       items: Sequence[Hashable] | None = None) -> list[dict]:
    """Each method against `base` and against the best of the others (by accuracy on these items), each pair
    once: `{"a", "b", "diff", "ci95", "p_mcnemar"}`, a minus b; `items` as for `paired`."""
    acc = {name: sum(c) / len(c) for name, c in correct.items() if c}
    out: list[dict] = []
    seen: set[frozenset[str]] = set()
    for a in sorted(acc, key=lambda name: name == base):  # the base last: its pairs read "method minus base"
        others = [b for b in acc if b != a]
        best = max(others, key=acc.__getitem__, default=None)  # the first of equals, in the order asked for
        for b in (base, best):
            if b in others and frozenset((a, b)) not in seen:
                seen.add(frozenset((a, b)))
                out.append({"a": a, "b": b, **paired(correct[a], correct[b], items)})
    return out
