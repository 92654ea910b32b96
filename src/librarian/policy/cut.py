"""A source's cut: the fixed sequence of cuts, each tested against the team's risk."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from librarian.policy.decision import DecisionPolicy


@dataclass(frozen=True)
class Certified:
    """A source's cut and what it rests on."""

    cut: float
    estimated_wrong: float  # the share wrong of the reviewed items at or above the cut
    upper_bound: float  # the share wrong the cut is certified not to exceed (the budget)
    reviewed: int  # reviewed items at or above the cut
    reviewed_wrong: int
    auto_links: int  # pending items at or above the cut
    basis: str  # "reviewed" | "global" | "none"
    guarantee: str = "bound"  # which promise the bound is (`DecisionPolicy.risk`)

    def as_json(self) -> dict[str, Any]:
        return {
            "cut": round(self.cut, 4),
            "estimated_wrong": round(self.estimated_wrong, 4),
            "upper_bound": round(self.upper_bound, 4),
            "reviewed_above_cut": self.reviewed,
            "reviewed_wrong_above_cut": self.reviewed_wrong,
            "auto_links": self.auto_links,
            "basis": self.basis,
            "guarantee": self.guarantee,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Certified:
        """A cut as `as_json` wrote it (the store's `source_cuts`)."""
        return cls(
            float(data["cut"]),
            float(data["estimated_wrong"]),
            float(data["upper_bound"]),
            int(data["reviewed_above_cut"]),
            int(data["reviewed_wrong_above_cut"]),
            int(data["auto_links"]),
            str(data["basis"]),
            str(data.get("guarantee", "bound")),
        )

    def describe(self, policy: DecisionPolicy, decisions: int) -> str:
        """In words, for the run summary, the audit and the workbench (the cut rounded as
        the summary's table rounds it, so the two never disagree): the guarantee, its
        budget and confidence, and the reviewed items the cut rests on."""
        cut = round(self.cut, 4)
        if self.basis == "reviewed":
            where = (
                f"certified by an exact test on {self.reviewed} reviewed items of this source "
                f"above it ({self.reviewed_wrong} wrong)"
            )
        elif self.basis == "global":
            where = "the trained models' cut for a section linked alone"
        elif decisions:
            where = f"its {decisions} reviewed items certify no cut yet"
        else:
            where = "no reviewed items of this source yet"
        if not self.auto_links:
            return f"cut {cut:.3f} ({where}), which nothing here reaches"
        if self.basis == "global":
            return f"{self.auto_links} linked automatically at >= {cut:.3f}: {where}"
        return (
            f"{self.auto_links} linked automatically at >= {cut:.3f} under '{policy.guarantee()}' "
            f"(wrong among the reviewed above it {self.estimated_wrong:.1%}), {where}"
        )


def choose_cut(
    pending: Sequence[float],
    reviewed: Sequence[float],
    reviewed_correct: Sequence[bool],
    policy: DecisionPolicy,
) -> Certified:
    """A source's cut: the lowest the fixed sequence reaches before its first failure.

    The sequence: each reviewed item's confidence, from the highest down, that has at
    least `min_reviewed` reviewed items at or above it and enough of them for its test to
    pass were none wrong (a cut no evidence could certify is no test: failing it for want
    of power would end the sequence before the cuts the evidence reaches). Which cuts are
    in it depends on the confidences and on which items were reviewed, never on a
    decision. Each is tested by `certifies` at the policy's
    test level under its guarantee (`DecisionPolicy.certifies`); a cut is in the sequence
    when it could pass with `tolerated_wrong` of its reviewed items wrong (chosen before
    the data, so a few wrong ones need not end it); the first that fails ends the sequence
    (fixed-sequence testing, as in Learn-then-Test: the chance that any cut it passes
    breaks the budget is at most 1 - that level, so the one chosen keeps the promise
    whichever it is). With no cut passed the source links nothing (cut 1.0).
    `pending`, `reviewed`: the confidences that decide (adapted)."""
    pairs = sorted(zip(reviewed, reviewed_correct, strict=True), key=lambda x: -x[0])
    ordered = sorted(pending, reverse=True)
    people = sum(reviewed_correct)  # links people made (at least: those of a right first)
    best = nothing_certified(policy)
    at_r = at_p = wrong = 0
    for cut in sorted({c for c in reviewed}, reverse=True):
        while at_r < len(pairs) and pairs[at_r][0] >= cut:
            wrong += not pairs[at_r][1]
            at_r += 1
        while at_p < len(ordered) and ordered[at_p] >= cut:
            at_p += 1
        tolerated = policy.tolerated_wrong
        if at_r < policy.min_reviewed or not policy.certifies(at_r + at_p, at_r, tolerated, people):
            continue  # not in the sequence: too little evidence reaches it
        if not policy.certifies(at_r + at_p, at_r, wrong, people):
            break  # the first failure ends the sequence
        best = Certified(
            cut=cut,
            estimated_wrong=wrong / at_r,
            upper_bound=policy.budget,
            reviewed=at_r,
            reviewed_wrong=wrong,
            auto_links=at_p,
            basis="reviewed",
            guarantee=policy.risk,
        )
    return best


def alone(threshold: float, policy: DecisionPolicy) -> Certified:
    """The cut of a section linked alone (a source too small to be linked as a whole),
    which its own reviewed items cannot test: the trained models' global cut, where the
    calibrated confidence itself keeps the budget (1 - cut <= budget), else none."""
    if 1.0 - threshold > policy.budget:
        return nothing_certified(policy)
    return replace(
        nothing_certified(policy), cut=threshold, estimated_wrong=1.0 - threshold, basis="global"
    )


def nothing_certified(policy: DecisionPolicy) -> Certified:
    """No cut: the source links nothing automatically, under the policy's guarantee (which
    its words and its stored cut name even so)."""
    return Certified(
        cut=1.0,
        estimated_wrong=0.0,
        upper_bound=policy.budget,
        reviewed=0,
        reviewed_wrong=0,
        auto_links=0,
        basis="none",
        guarantee=policy.risk,
    )
