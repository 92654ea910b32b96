"""The review plan: which of a source's items its reviewers should decide next, for what
their decisions would certify, and how many."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from librarian.policy.cut import certifies, choose_cut
from librarian.policy.decision import DecisionPolicy

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
    def review_all(self) -> bool:
        """Whether deciding every open item is cheaper than certifying a cut."""
        return not self.certified and self.more > 0 and self.covers <= self.more

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
            return (
                f"{so_far}; this source is small for its budget: reviewing all "
                f"{self.open_items} open items with a suggestion is cheaper than certifying a "
                f"cut ({policy.guarantee()})"
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
    it, and all right) after which `certifies` passes there; the cut that leaves the most
    open items linked is the plan. Reads the confidences and the decisions made, nothing
    else."""
    right = sum(reviewed_correct)
    now = choose_cut(pending, reviewed, reviewed_correct, policy)
    base = ReviewPlan(len(reviewed), right, len(pending), now.auto_links, 0, 1.0, 0)
    if now.auto_links:
        return base
    ordered = sorted(pending, reverse=True)
    step = max(1, len(ordered) // PLAN_CUTS)
    best = base
    for at_p in range(step, len(ordered) + 1, step):
        cut = ordered[at_p - 1]
        above = [ok for c, ok in zip(reviewed, reviewed_correct, strict=True) if c >= cut]
        more = _more_needed(at_p, len(above), len(above) - sum(above), policy)
        if more is not None and at_p - more > best.covers - best.more:
            best = ReviewPlan(len(reviewed), right, len(pending), 0, more, cut, at_p - more)
    return best


def _more_needed(open_above: int, reviewed: int, wrong: int, policy: DecisionPolicy) -> int | None:
    """The fewest more right decisions among `open_above` open items after which the cut
    is certified (binary search: each one more makes the test stronger); None: none do."""

    def passes(more: int) -> bool:
        if reviewed + more < policy.min_reviewed:
            return False
        above = reviewed + open_above
        return certifies(above, reviewed + more, wrong, policy.budget, policy.test_confidence())

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
