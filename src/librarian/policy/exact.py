"""The exact test a cut is certified by: pure arithmetic, no policy read."""

from __future__ import annotations

import math
from functools import lru_cache


# Cached: a review plan re-tests the same few thousand (above, reviewed, wrong) after
# every decision (`eval --review-order plan` re-plans K times a draw).
@lru_cache(maxsize=1 << 16)
def certifies(
    above: int, reviewed: int, wrong: int, budget: float, confidence: float, links: int = 0
) -> bool:
    """Whether `reviewed` items drawn at random from the `above` items at or above a cut,
    `wrong` of them wrong, show at level 1 - `confidence` that the wrong ones among the
    other `above - reviewed` (the ones it would link) are at most `budget` of the links
    the guarantee counts: those auto-links, and `links` more the source's people made
    (0: the guarantee over the auto-links alone; the reviewed links are right, a person
    chose them).

    The exact finite-population test: under the null, at least `wrong + floor(budget *
    (open + links)) + 1` of the `above` are wrong, and the chance of seeing no more than
    `wrong` of them in the sample is a hypergeometric tail; the null is rejected when that
    chance is at most 1 - `confidence`. Valid for any sample size (no normal
    approximation, no prior) and about the open items themselves, not an infinite
    population they were drawn from."""
    open_items = above - reviewed
    if open_items <= 0 or reviewed <= 0:
        return False
    least_wrong = wrong + math.floor(budget * (open_items + links) + 1e-9) + 1
    if least_wrong > wrong + open_items:
        return True  # no count of wrong open items breaks the budget
    return hypergeom_cdf(wrong, above, least_wrong, reviewed) <= 1.0 - confidence + 1e-12


def hypergeom_cdf(seen: int, population: int, marked: int, drawn: int) -> float:
    """P(at most `seen` marked among `drawn` drawn without replacement from `population`
    holding `marked`): scipy.stats.hypergeom.cdf, summed here over the few terms a test
    needs (`seen` is the handful of wrong reviewed items) on the log scale, ~100 times
    faster than scipy's generic path; a review plan runs tens of thousands of them."""

    def log_choose(n: int, k: int) -> float:
        return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)

    total = log_choose(population, drawn)
    low = max(0, drawn - (population - marked))
    return min(
        1.0,
        sum(
            math.exp(log_choose(marked, x) + log_choose(population - marked, drawn - x) - total)
            for x in range(low, min(seen, marked, drawn) + 1)
        ),
    )
