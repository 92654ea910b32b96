"""The review plan: which of a source's items its reviewers should decide next, for what
their decisions would certify, and how many."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from librarian.policy.cut import choose_cut
from librarian.policy.decision import DecisionPolicy
from librarian.policy.sample import CALIBRATION_SAMPLE, calibration_sample

# Cuts a plan weighs: this many places in a source's confidences, evenly by rank (each
# costs a few exact tests; a plan is computed after every decision).
PLAN_CUTS = 40


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
    def extends(self) -> bool:
        """Whether more decisions would certify a larger band than the one certified."""
        return self.more > 0 and self.covers > self.certified

    @property
    def review_all(self) -> bool:
        """Whether deciding every open item is cheaper than certifying a cut."""
        return not self.certified and self.more > 0 and self.covers <= self.more

    def glance(self) -> str:
        """The source's state in a few plain words, for the top of an item's page: what
        the reviewer's next decisions buy ("12 more decisions here would let 140 link
        themselves"); `says` gives the numbers behind it."""
        if self.certified and self.extends:
            return (
                f"{self.certified} open items link themselves; {self.more} more decisions here "
                f"would let {self.covers} link themselves"
            )
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
        if self.certified and self.extends:
            return (
                f"{so_far}; the cut is certified ({policy.guarantee()}) for {self.certified} "
                f"open items; {self.more} more decisions at confidence >= {self.at:.2f}, "
                f"as right, would extend it to {self.covers}"
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
    """The band whose review would certify the most open items for the fewest decisions:
    for each of PLAN_CUTS cuts, the fewest more decisions (drawn from the open items above
    it, as right as the policy tolerates: `tolerated_wrong` of them may be wrong) after
    which the policy's test passes there; the plan is the band whose links, less the
    decisions they need, are the most (`_worth`: a band is weighed as `outlook` weighs
    it). Once a cut is certified, the plan is the larger band more decisions would
    certify, if any (decisions inside the band until it is certified, outside it after).
    Where a band can be certified but none is worth its decisions, the plan is the
    cheapest of them, and says that reviewing every open item is cheaper (`review_all`).
    Reads the confidences and the decisions made, nothing else."""
    right = sum(reviewed_correct)
    now = choose_cut(pending, reviewed, reviewed_correct, policy)
    base = ReviewPlan(len(reviewed), right, len(pending), now.auto_links, 0, 1.0, 0)
    ordered = sorted(pending, reverse=True)
    step = max(1, len(ordered) // PLAN_CUTS)
    best, cheapest = base, base
    for at_p in range(step, len(ordered) + 1, step):
        cut = ordered[at_p - 1]
        if at_p <= now.auto_links:
            continue  # certified already
        above = [ok for c, ok in zip(reviewed, reviewed_correct, strict=True) if c >= cut]
        more = _more_needed(at_p, len(above), len(above) - sum(above), right, policy)
        if more is None:
            continue
        plan = ReviewPlan(
            len(reviewed), right, len(pending), now.auto_links, more, cut, at_p - more
        )
        if _worth(plan) > _worth(best):
            best = plan
        elif not cheapest.more or _worth(plan) > _worth(cheapest):
            cheapest = plan
    if best is base and not now.auto_links and cheapest.more:
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
    CALIBRATION_SAMPLE); once a cut is certified, of the larger band more decisions would
    certify, and none when there is none; with no band to certify (or no plan: no run
    has chosen the source's cut from its evidence yet), the calibration sample of the most
    confident items, which each need a person anyway."""
    if plan is not None and plan.certified and not plan.extends:
        return []
    if plan is None or not plan.more or plan.review_all:
        return calibration_sample(pending, max(0, CALIBRATION_SAMPLE - decided), seed)
    band = [i for i, c in enumerate(pending) if c >= plan.at]
    picks = calibration_sample([pending[i] for i in band], min(plan.more, CALIBRATION_SAMPLE), seed)
    return sorted(band[j] for j in picks)


def outlook(items: int, policy: DecisionPolicy) -> str:
    """What a source of `items` items can expect under `policy`, in plain words, before
    any decision: the band whose review, all as right as the policy tolerates, would
    certify the most items for the fewest decisions (the plan's arithmetic on a source
    whose items are all open), or that none would."""
    step = max(1, items // PLAN_CUTS)
    best: tuple[int, int] | None = None  # (decisions, items they certify)
    for band in range(step, items + 1, step):
        more = _more_needed(band, 0, 0, 0, policy)
        if (
            more is not None
            and band - more > more
            and (best is None or band - 2 * more > best[1] - best[0])
        ):
            best = (more, band - more)
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
