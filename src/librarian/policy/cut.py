"""A source's cut: the fixed sequence of cuts, each tested against the team's risk."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from librarian.policy.risk import PRIOR_WEIGHT, RiskPolicy


@dataclass(frozen=True)
class Certified:
    """A source's cut and what it rests on."""

    cut: float
    estimated_wrong: float  # posterior mean share wrong of the auto-links at the cut
    upper_bound: float  # ... and its upper bound at the policy's confidence
    reviewed: int  # reviewed items at or above the cut
    reviewed_wrong: int
    auto_links: int  # pending items at or above the cut
    basis: str  # "reviewed" | "global" | "none"

    def as_json(self) -> dict[str, Any]:
        return {
            "cut": round(self.cut, 4),
            "estimated_wrong": round(self.estimated_wrong, 4),
            "upper_bound": round(self.upper_bound, 4),
            "reviewed_above_cut": self.reviewed,
            "reviewed_wrong_above_cut": self.reviewed_wrong,
            "auto_links": self.auto_links,
            "basis": self.basis,
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
        )

    def describe(self, policy: RiskPolicy, decisions: int) -> str:
        """In words, for the run summary, the audit and the workbench (the cut rounded as
        the summary's table rounds it, so the two never disagree): the guarantee, its
        budget and confidence, and the reviewed items the cut rests on."""
        cut = round(self.cut, 4)
        trained = "the trained models' cut for a standard linked as a whole"
        if self.basis == "reviewed":
            where = f"certified by {self.reviewed} reviewed items of this source above it"
        elif decisions:
            where = (
                f"{trained}: its {decisions} reviewed items certify none lower yet (more "
                "reviewed in its most confident band would)"
            )
        else:
            where = f"{trained}: no reviewed items of this source yet"
        if not self.auto_links:
            return f"cut {cut:.3f} ({where}), which nothing here reaches"
        return (
            f"{self.auto_links} linked automatically at >= {cut:.3f} under '{policy.guarantee()}': "
            f"estimated wrong {self.estimated_wrong:.1%} ({policy.confidence:.0%} bound "
            f"{self.upper_bound:.1%}), {where}"
        )


def posterior(
    prior_wrong: float, reviewed: int, wrong: int, weight: float = PRIOR_WEIGHT
) -> tuple[float, float, float]:
    """Beta(a, b) of the share wrong: the prior centred on `prior_wrong` (weighing
    `weight` items), updated with `wrong` of `reviewed`. Returns (a, b, mean)."""
    centre = min(1.0 - 1e-6, max(1e-6, prior_wrong))
    a = weight * centre + wrong
    b = weight * (1.0 - centre) + reviewed - wrong
    return a, b, a / (a + b)


def upper_bound(a: float, b: float, confidence: float) -> float:
    # Imported here: scipy.stats takes ~1 s to import, and most commands never ask.
    from scipy.stats import beta as beta_distribution

    return float(beta_distribution.ppf(confidence, a, b))


def choose_cut(
    pending: Sequence[float],
    reviewed: Sequence[float],
    reviewed_correct: Sequence[bool],
    global_threshold: float,
    policy: RiskPolicy,
) -> Certified:
    """A source's cut: the lowest the fixed sequence reaches before its first failure.

    The sequence: the global cut (trained on other frameworks' held-out rows), then each
    reviewed item's confidence below it with at least `min_reviewed` reviewed items at or
    above it (the evidence reaches down to the cut, never extrapolated from the top of a
    band to its untried bottom). Which cuts are in it depends on the confidences alone,
    never on a decision. A cut passes when its posterior keeps the policy's guarantee
    (`RiskPolicy.passes`), the global cut too: a cut is never shown with an estimate
    beyond the promise it is shown under. A tested cut (`min_reviewed` reviewed items or
    more) that fails ends the sequence; the global cut failing on little evidence only
    links nothing there. When no cut passes the source links nothing (cut 1.0).
    `pending`, `reviewed`: the confidences that decide (adapted)."""
    below = sorted({c for c in reviewed if c < global_threshold}, reverse=True)
    pairs = sorted(zip(reviewed, reviewed_correct, strict=True), key=lambda x: -x[0])
    ordered = sorted(pending, reverse=True)
    best = Certified(1.0, 0.0, 0.0, 0, 0, 0, "none")
    at_r = at_p = wrong = 0
    expected = 0.0
    for cut in [global_threshold, *below]:
        while at_r < len(pairs) and pairs[at_r][0] >= cut:
            wrong += not pairs[at_r][1]
            at_r += 1
        while at_p < len(ordered) and ordered[at_p] >= cut:
            expected += 1.0 - ordered[at_p]
            at_p += 1
        tested = at_r >= policy.min_reviewed
        if cut < global_threshold and not tested:
            continue  # not in the sequence: too little evidence reaches it
        centre = policy.prior_centre(expected / at_p if at_p else 1.0 - cut)
        a, b, mean = posterior(centre, at_r, wrong, policy.prior_weight)
        bound = upper_bound(a, b, policy.confidence)
        if policy.passes(mean, bound):
            basis = "global" if cut >= global_threshold else "reviewed"
            best = Certified(cut, mean, bound, at_r, wrong, at_p, basis)
        elif tested:
            break  # the first failure ends the sequence
        # The global cut, on the prior alone, promises too much: no link there, and the
        # reviewed evidence below it is still tested in turn.
    return best
