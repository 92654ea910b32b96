"""Two designs for a team's review, measured beside the shipped plan (issue 59; used by
`plan_by_size.py --test anytime`, `--band once|once-forecast`). Neither is shipped as
such: since 2026-12-08 the plan draws its band once (`policy.plan.drawn_band`), sized by
the source's size and what a hundred decisions can vouch for.

- `anytime_certifies`: the cut's test made valid under optional stopping, a confidence
  sequence for sampling without replacement (the prior-posterior ratio of Waudby-Smith
  and Ramdas, 2020, "Confidence sequences for sampling without replacement"): a band's
  count wrong N is rejected once the likelihood of the decisions seen, given N, is at
  most 1 - confidence times their marginal likelihood under a beta-binomial prior. By
  Ville's inequality the chance of ever rejecting the true N is at most 1 - confidence,
  however the team chooses when to stop.
- `follow_once`: the band drawn once, before any decision, from the cold confidences
  alone (the plan's band with nothing decided: before 2026-12-08 the band of the plan
  re-planned after each decision, the whole source on owasp_ai_exchange's draws; since,
  the drawn band. Or with `forecast` the band whose
  forecast wrong, the mean of 1 - c over it, still certifies), its items decided in a
  seeded random order until a cut is certified, then the most confident item the cut
  leaves to people. No outcome moves which items are sampled: the decisions above any
  cut in the band are a simple random sample of its items.
- `follow_two_stages`: the shipped plan's drawn band, then, once a cut is certified, a
  second band drawn once below it (the next `drawn_band` of the items left), decided at
  random until a larger cut is certified; the cut's test reads both stages' decisions as
  one sample (no stratified test).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from functools import lru_cache

from librarian.policy import Certified, DecisionPolicy, choose_cut, review_plan
from librarian.policy.plan import drawn_band
from librarian.training.following import Followed

PRIOR = (1.0, 1000.0)  # Beta(a, b) on a band's share wrong: a band the plan aims at is nearly right


def _log_falling(n: int, k: int) -> float:
    if k < 0 or n < k:
        return -math.inf
    return math.lgamma(n + 1) - math.lgamma(n - k + 1)


@lru_cache(maxsize=1 << 18)
def anytime_certifies(
    above: int, reviewed: int, wrong: int, budget: float, confidence: float, links: int = 0
) -> bool:
    """`exact.certifies`'s question, answered by the confidence sequence (module doc)."""
    open_items = above - reviewed
    if open_items <= 0 or reviewed <= 0:
        return False
    least = wrong + math.floor(budget * (open_items + links) + 1e-9) + 1
    if least > wrong + open_items:
        return True
    a, b = PRIOR
    log_marginal = (
        math.lgamma(a + wrong) + math.lgamma(b + reviewed - wrong) - math.lgamma(a + b + reviewed)
    ) - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))

    def log_likelihood(n: int) -> float:
        return (
            _log_falling(n, wrong)
            + _log_falling(above - n, reviewed - wrong)
            - _log_falling(above, reviewed)
        )

    # The likelihood is unimodal in N: the largest over N >= least is at least, or further
    # up while it still rises.
    n, best = least, log_likelihood(least)
    while n + 1 <= above - (reviewed - wrong) and log_likelihood(n + 1) > best:
        n, best = n + 1, log_likelihood(n + 1)
    return best <= math.log(1.0 - confidence) + log_marginal + 1e-12


def _forecast_band(confidences: Sequence[float], policy: DecisionPolicy) -> float:
    """The lowest confidence of the band worth most (its items less twice its decisions)
    whose review certifies it were its share wrong what its confidences forecast. Where
    none is worth its decisions, the least bad: on prose, a band of 12-15 items, after
    which the decisions go to the most confident items left (docs/quality.md)."""
    ranked = sorted(confidences, reverse=True)
    step = max(1, len(ranked) // 40)
    best: tuple[int, float] | None = None
    for band in range(step, len(ranked) + 1, step):
        forecast = sum(1.0 - c for c in ranked[:band]) / band
        for more in range(policy.min_reviewed, band):
            wrong = round(forecast * more)
            if policy.certifies(band, more, wrong, more - wrong):
                if best is None or band - 2 * more > best[0]:
                    best = (band - 2 * more, ranked[band - 1])
                break
    return best[1] if best else 2.0


def follow_once(
    confidences: Sequence[float],
    right: Sequence[bool],
    k: int,
    policy: DecisionPolicy,
    seed: str,
    forecast: bool = False,
) -> Followed:
    """`k` decisions in a band drawn once (module doc); the shape of `follow_plan`."""
    n = len(confidences)
    if forecast:
        at = _forecast_band(confidences, policy)
    else:
        first = review_plan(list(confidences), [], [], policy)
        at = first.at if first.more else 2.0
    band = [i for i in range(n) if confidences[i] >= at]
    random.Random(hashlib.sha256(seed.encode("utf-8")).hexdigest()).shuffle(band)
    decided: list[int] = []
    certified_after: int | None = None
    for step in range(min(k, n)):
        pending, cut = _cut_now(confidences, right, decided, policy)
        if cut.auto_links and certified_after is None:
            certified_after = step
        ask = None if cut.auto_links else next((i for i in band if i not in decided), None)
        ask = _left_to_people(confidences, pending, cut) if ask is None else ask
        if ask is None:
            break
        decided.append(ask)
    return Followed(decided, certified_after)


def _cut_now(
    confidences: Sequence[float], right: Sequence[bool], decided: list[int], policy: DecisionPolicy
) -> tuple[list[int], Certified]:
    """The open items and the cut a run would choose after these decisions."""
    done = set(decided)
    pending = [i for i in range(len(confidences)) if i not in done]
    cut = choose_cut(
        [confidences[i] for i in pending],
        [confidences[i] for i in decided],
        [right[i] for i in decided],
        policy,
    )
    return pending, cut


def _left_to_people(confidences: Sequence[float], pending: list[int], cut: Certified) -> int | None:
    """The most confident open item the cut leaves to people (None: every one links)."""
    left = [i for i in pending if not (cut.auto_links and confidences[i] >= cut.cut)]
    return max(left, key=lambda i: confidences[i]) if left else None


def follow_two_stages(
    confidences: Sequence[float], right: Sequence[bool], k: int, policy: DecisionPolicy, seed: str
) -> Followed:
    """`k` decisions in two bands drawn once (module doc); the shape of `follow_plan`."""
    n = len(confidences)
    order = sorted(range(n), key=lambda i: -confidences[i])
    draw = random.Random(hashlib.sha256(seed.encode("utf-8")).hexdigest())
    first = drawn_band(n, policy)
    bands = [order[:first], order[first : first + drawn_band(n - first, policy)]]
    for band in bands:
        draw.shuffle(band)
    decided: list[int] = []
    stage, certified, finished = 0, 0, False
    certified_after: int | None = None
    while len(decided) < min(k, n):
        pending, cut = _cut_now(confidences, right, decided, policy)
        if cut.auto_links > certified and not finished:
            certified, finished = cut.auto_links, stage == 1
            certified_after = len(decided) if certified_after is None else certified_after
            stage = 1
        ask = None if finished else next((i for i in bands[stage] if i not in decided), None)
        ask = _left_to_people(confidences, pending, cut) if ask is None else ask
        if ask is None:
            break
        decided.append(ask)
    return Followed(decided, certified_after)
