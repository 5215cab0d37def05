"""The statistics every reported accuracy carries: a Wilson interval, and paired comparisons on the same items.

Accuracies here are proportions of items right, so an interval is a binomial one (Wilson: sound at small n and
near 0 or 1, where the normal approximation is not). Two methods scored on the same items are compared on the
items where they disagree (exact McNemar); their difference gets the Agresti-Min interval for paired
proportions (Wald on the 2x2 table with half a count added to each cell, which keeps its coverage near 95% at
the sizes `eval` runs, and does not shrink to a point when the two methods never disagree).
"""

from __future__ import annotations

from scipy.stats import binomtest, norm

LEVEL = 0.95


def wilson(k: int, n: int) -> list[float] | None:
    """95% Wilson interval of k successes out of n (None when there are no items)."""
    if n == 0:
        return None
    ci = binomtest(k, n).proportion_ci(confidence_level=LEVEL, method="wilson")
    return [float(ci.low), float(ci.high)]


def paired(a: list[bool], b: list[bool]) -> dict[str, float | list[float]]:
    """Accuracy of `a` minus that of `b` on the same items, its 95% interval and the exact McNemar p-value."""
    if len(a) != len(b) or not a:
        raise ValueError(f"paired comparison needs two equally long, non-empty lists ({len(a)} and {len(b)} items)")
    n = len(a)
    only_a = sum(x and not y for x, y in zip(a, b))
    only_b = sum(y and not x for x, y in zip(a, b))
    # McNemar conditions on the discordant items: under "no difference" each is a's or b's with probability 1/2
    p = binomtest(only_a, only_a + only_b).pvalue if only_a + only_b else 1.0
    # Agresti-Min: half a count in each of the four cells; the discordant gap stays, the total grows by 2
    m = n + 2
    d = (only_a - only_b) / m
    var = ((only_a + only_b + 1) - (only_a - only_b) ** 2 / m) / m**2
    half = float(norm.ppf(0.5 + LEVEL / 2)) * var**0.5
    return {"diff": (only_a - only_b) / n, "ci95": [max(-1.0, d - half), min(1.0, d + half)], "p_mcnemar": float(p)}


def significant(comparison: dict) -> bool:
    return comparison["p_mcnemar"] < 1 - LEVEL


def paired_comparisons(correct: dict[str, list[bool]], base: str = "zero-shot") -> list[dict]:
    """Each method against `base` and against the best of the others (by accuracy on these items), each pair
    once: `{"a", "b", "diff", "ci95", "p_mcnemar"}`, a minus b."""
    acc = {name: sum(c) / len(c) for name, c in correct.items() if c}
    out: list[dict] = []
    seen: set[frozenset[str]] = set()
    for a in sorted(acc, key=lambda name: name == base):  # the base last: its pairs read "method minus base"
        others = [b for b in acc if b != a]
        best = max(others, key=acc.__getitem__, default=None)  # the first of equals, in the order asked for
        for b in (base, best):
            if b in others and frozenset((a, b)) not in seen:
                seen.add(frozenset((a, b)))
                out.append({"a": a, "b": b, **paired(correct[a], correct[b])})
    return out
