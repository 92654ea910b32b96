"""The review plan: which of a source's items its reviewers should decide next, for what
their decisions would certify, and how many."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from librarian.policy.cut import choose_cut
from librarian.policy.decision import DecisionPolicy
from librarian.policy.sample import CALIBRATION_SAMPLE, calibration_sample

# Cuts a plan weighs where its drawn band cannot be certified: this many places in a
# source's confidences, evenly by rank (each costs a few exact tests; a plan is computed
# after every decision).
PLAN_CUTS = 40
# The band a plan draws once: at most this share of a source's items, the most confident
# (below it the model is too often wrong for a sample to vouch for it; on dev sources of
# 150-500 items, 0.5-0.7 linked within a few points of each other) ...
PLAN_REACH = 0.6
# ... and no more than a team's afternoon of this many decisions, this many of them wrong,
# could certify. Chosen on dev sources drawn from owasp_ai_exchange (docs/quality.md).
PLAN_DECISIONS = 100
PLAN_WRONG = 2


@dataclass(frozen=True)
class ReviewPlan:
    """What a source's reviewers should do next to certify a cut under a policy."""

    reviewed: int
    right: int
    open_items: int  # those with a suggestion: what a cut can link (an item without is a person's)
    certified: int  # open items a cut certifies now (0: none)
    more: int  # decisions still needed, all right, at confidence >= `at` (0: none planned)
    at: float  # the band's lowest confidence
    covers: int  # open items at or above `at` the plan would certify

    @property
    def review_all(self) -> bool:
        """Whether deciding every open item is cheaper than certifying a cut."""
        return not self.certified and self.more > 0 and self.covers <= self.more

    def glance(self) -> str:
        """The source's state in a few plain words, for the top of an item's page: what
        the reviewer's next decisions buy ("12 more decisions here would let 140 link
        themselves"); `says` gives the numbers behind it."""
        if self.certified:
            return f"{self.certified} open items link themselves: no more calibration is needed"
        if not self.more:
            return f"review all {self.open_items}: no band can be certified by decisions alone"
        if self.review_all:
            return f"review all {self.open_items}: too few to certify"
        return f"{self.more} more decisions here would let {self.covers} link themselves"

    def says(self, policy: DecisionPolicy) -> str:
        """One line with numbers, for the CLI, `queue status` and the workbench."""
        so_far = (
            f"right so far {self.right} of {self.reviewed} ({self.right / self.reviewed:.0%})"
            if self.reviewed
            else "no decisions yet"
        )
        if self.certified:
            return (
                f"{so_far}; the cut is certified ({policy.guarantee()}) for {self.certified} "
                "open items: no more calibration is needed"
            )
        if not self.more:
            return (
                f"{so_far}; no band of its {self.open_items} open items with a suggestion can "
                f"be certified ({policy.guarantee()}) by more decisions alone: each needs a "
                "person"
            )
        if self.review_all:
            why = (
                "its wrong decisions leave no band worth certifying"
                if self.right < self.reviewed
                else "this source is small for its budget"
            )
            return (
                f"{so_far}; {why}: reviewing all {self.open_items} open items with a "
                f"suggestion is cheaper than certifying a cut ({policy.guarantee()})"
            )
        return (
            f"{so_far}; {self.more} more decisions at confidence >= {self.at:.2f}, all right, "
            f"would certify {policy.guarantee()} for the {self.covers} above it"
        )


def review_plan(
    pending: Sequence[float],
    reviewed: Sequence[float],
    reviewed_correct: Sequence[bool],
    policy: DecisionPolicy,
) -> ReviewPlan:
    """The band a source's reviewers should decide in, and how many more decisions in it
    would certify it (as right as the policy tolerates: `tolerated_wrong` may be wrong).

    The band is drawn once, from every item's cold confidence, open and decided alike
    (`drawn_band`): a band re-drawn on the decisions seen steers its own sample, and the
    cut's exact test assumes a simple random one (docs/quality.md, "What steers the
    plan's sample"). Once a cut is certified the plan asks for nothing more in a band:
    the decisions left go to what the cut leaves to people. Where the drawn band cannot
    be certified, or is not worth its decisions, the plan is the band worth most among
    PLAN_CUTS cuts of the open items (`_searched_plan`), or says that reviewing every open
    item is cheaper (`review_all`). Reads the confidences and the decisions made, nothing
    else."""
    right = sum(reviewed_correct)
    now = choose_cut(pending, reviewed, reviewed_correct, policy)
    base = ReviewPlan(len(reviewed), right, len(pending), now.auto_links, 0, 1.0, 0)
    if now.auto_links:
        return base
    drawn = _in_drawn_band(pending, reviewed, reviewed_correct, policy, base)
    return (
        drawn
        if drawn is not None
        else _searched_plan(pending, reviewed, reviewed_correct, policy, base)
    )


@lru_cache(maxsize=1 << 12)
def drawn_band(items: int, policy: DecisionPolicy) -> int:
    """How many of a source's most confident items its plan's band holds: PLAN_REACH of
    them, and no more than PLAN_DECISIONS decisions, PLAN_WRONG of them wrong, could
    certify (on a large source the band 100 decisions can vouch for, not the whole of its
    reach). Reads no decision."""
    reach = math.ceil(items * PLAN_REACH)
    if reach <= PLAN_DECISIONS:
        return reach
    people = PLAN_DECISIONS - PLAN_WRONG
    # Scanned, not bisected: the test's floor makes it pass again just past a failure.
    vouched = [
        band
        for band in range(PLAN_DECISIONS + 1, reach + 1)
        if policy.certifies(band, PLAN_DECISIONS, PLAN_WRONG, people)
    ]
    return max(vouched, default=PLAN_DECISIONS)


def _in_drawn_band(
    pending: Sequence[float],
    reviewed: Sequence[float],
    reviewed_correct: Sequence[bool],
    policy: DecisionPolicy,
    base: ReviewPlan,
) -> ReviewPlan | None:
    """The plan in the band drawn once (`drawn_band`); None where no more decisions could
    certify it or it is not worth them."""
    everything = sorted([*pending, *reviewed], reverse=True)
    size = drawn_band(len(everything), policy)
    if not size:
        return None
    at = everything[size - 1]
    open_above = sum(c >= at for c in pending)
    above = [ok for c, ok in zip(reviewed, reviewed_correct, strict=True) if c >= at]
    more = _more_needed(open_above, len(above), len(above) - sum(above), base.right, policy)
    if not more:
        return None
    plan = ReviewPlan(base.reviewed, base.right, base.open_items, 0, more, at, open_above - more)
    return plan if _worth(plan) > 0 else None


def _searched_plan(
    pending: Sequence[float],
    reviewed: Sequence[float],
    reviewed_correct: Sequence[bool],
    policy: DecisionPolicy,
    base: ReviewPlan,
) -> ReviewPlan:
    """For each of PLAN_CUTS cuts, the fewest more decisions among the open items above it
    after which the policy's test passes there; the band whose links, less the decisions
    they need, are the most (`_worth`); where none is worth its decisions, the cheapest
    that could be certified (`review_all`), else `base` (none can)."""
    ordered = sorted(pending, reverse=True)
    step = max(1, len(ordered) // PLAN_CUTS)
    best, cheapest = base, base
    for at_p in range(step, len(ordered) + 1, step):
        cut = ordered[at_p - 1]
        above = [ok for c, ok in zip(reviewed, reviewed_correct, strict=True) if c >= cut]
        more = _more_needed(at_p, len(above), len(above) - sum(above), base.right, policy)
        if more is None:
            continue
        plan = ReviewPlan(base.reviewed, base.right, base.open_items, 0, more, cut, at_p - more)
        if _worth(plan) > _worth(best):
            best = plan
        elif not cheapest.more or _worth(plan) > _worth(cheapest):
            cheapest = plan
    if best is base and cheapest.more:
        return cheapest  # certifiable, at more decisions than it links: `review_all`
    return best


def _worth(plan: ReviewPlan) -> int:
    """What following a plan leaves linked less the decisions it takes: its band's items
    that link themselves, less the decisions spent on them (a certified cut with nothing
    more planned: the items it links)."""
    return plan.covers - plan.more if plan.more else plan.certified


def _more_needed(
    open_above: int, reviewed: int, wrong: int, right: int, policy: DecisionPolicy
) -> int | None:
    """The fewest more decisions among `open_above` open items after which the cut is
    certified, `tolerated_wrong` of all those above it wrong (binary search: each one
    more makes the test stronger); None: none do. `right`: the source's right decisions
    (links its people made, which the guarantee over its links counts)."""
    wrong = max(wrong, policy.tolerated_wrong)

    def passes(more: int) -> bool:
        if reviewed + more < policy.min_reviewed:
            return False
        above = reviewed + open_above
        people = right + max(0, more - policy.tolerated_wrong)
        return policy.certifies(above, reviewed + more, wrong, people)

    if not passes(open_above - 1):
        return None
    low, high = 0, open_above - 1
    while low < high:
        middle = (low + high) // 2
        if passes(middle):
            high = middle
        else:
            low = middle + 1
    return low


def review_next(
    pending: list[float], plan: ReviewPlan | None, decided: int, seed: str
) -> list[int]:
    """The open items the plan asks its reviewers to decide next (indices into `pending`):
    a seeded probability sample of its band, as many as it needs (at most
    CALIBRATION_SAMPLE); once a cut is certified, none (what is left is the items the cut
    leaves to people); with no band to certify (or no plan: no run has chosen the source's
    cut from its evidence yet), the calibration sample of the most confident items, which
    each need a person anyway."""
    if plan is not None and plan.certified:
        return []
    if plan is None or not plan.more or plan.review_all:
        return calibration_sample(pending, max(0, CALIBRATION_SAMPLE - decided), seed)
    band = [i for i, c in enumerate(pending) if c >= plan.at]
    picks = calibration_sample([pending[i] for i in band], min(plan.more, CALIBRATION_SAMPLE), seed)
    return sorted(band[j] for j in picks)


def outlook(items: int, policy: DecisionPolicy) -> str:
    """What a source of `items` items can expect under `policy`, in plain words, before
    any decision: what the plan would ask for on it with nothing decided (its drawn band,
    or the band worth most), were its decisions as right as the policy tolerates, or that
    no band is worth its decisions."""
    best = _first_band(items, policy)
    if best is None:
        return (
            f"under '{policy.guarantee()}' no band of a {items}-item source can be certified "
            "for fewer decisions than it holds: its items each need a person"
        )
    more, certified = best
    return (
        f"under '{policy.guarantee()}' about {more} decisions in its most confident band, "
        f"as right, would link {certified} more ({certified / items:.0%} of it) automatically"
    )


def _first_band(items: int, policy: DecisionPolicy) -> tuple[int, int] | None:
    """(decisions, items they certify) of the plan on a source whose `items` are all open,
    as `review_plan` weighs it; None: no band is worth its decisions."""
    drawn = drawn_band(items, policy)
    more = _more_needed(drawn, 0, 0, 0, policy) if drawn else None
    if more and drawn - more > more:
        return more, drawn - more
    step = max(1, items // PLAN_CUTS)
    best: tuple[int, int] | None = None
    for band in range(step, items + 1, step):
        more = _more_needed(band, 0, 0, 0, policy)
        if (
            more is not None
            and band - more > more
            and (best is None or band - 2 * more > best[1] - best[0])
        ):
            best = (more, band - more)
    return best
