"""The decision policy: which confidence decides, and from what evidence a source's cut.

One number orders a row's suggestions and decides it: the calibrated confidence (global
calibrator, collective evidence, the source's own adaptation). A source's cut is chosen
here and nowhere else:

- cold (fewer than `min_reviewed` reviewed items above any cut): the trained global cut;
- warm: the lowest cut at which a Beta-binomial posterior puts the expected share wrong
  of the source's auto-links at or under the team's budget (`RiskPolicy.budget`). The
  prior is centred on what the model itself expects of that band (the mean of 1 -
  confidence of the items it would link) and weighs `PRIOR_WEIGHT` items; the reviewed
  items at or above the cut are the evidence. The upper bound at `RiskPolicy.confidence`
  is reported beside it (docs/quality.md: the rule, its guarantee, its assumptions).

Pure: no I/O, nothing read but the numbers given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from librarian.settings import default_of

# How many reviewed items the model's own expectation weighs as, in a source's prior.
PRIOR_WEIGHT = 2.0


@dataclass(frozen=True)
class RiskPolicy:
    """The risk a team accepts: at most `budget` of a source's auto-links wrong (the
    posterior mean), the bound reported at `confidence`, a cut resting on at least
    `min_reviewed` reviewed items."""

    budget: float = default_of("wrong_budget")
    confidence: float = default_of("risk_confidence")
    min_reviewed: int = 10


@dataclass(frozen=True)
class Adaptation:
    """One source's recalibration of the global confidence: p' = s(slope * logit p + offset)."""

    slope: float
    offset: float
    decisions: int

    def apply(self, probability: float) -> float:
        p = min(1.0 - 1e-9, max(1e-9, probability))
        z = self.slope * math.log(p / (1.0 - p)) + self.offset
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def fit_adaptation(
    probabilities: Sequence[float], correct: Sequence[bool], shrinkage: float
) -> Adaptation:
    """Maximum a posteriori slope and offset of a logistic on the global logit, with a
    Gaussian prior of strength `shrinkage` around (1, 0) (Newton steps; two parameters).
    The slope is kept positive: the adaptation may rescale the confidence, never invert
    the order it gives a source's suggestions."""
    import numpy as np

    p = np.clip(np.asarray(probabilities, dtype=np.float64), 1e-9, 1.0 - 1e-9)
    x = np.stack([np.log(p / (1.0 - p)), np.ones_like(p)], axis=1)
    y = np.asarray(correct, dtype=np.float64)
    theta, prior = np.array([1.0, 0.0]), np.array([1.0, 0.0])
    for _ in range(50):
        q = 1.0 / (1.0 + np.exp(-np.clip(x @ theta, -700, 700)))
        grad = x.T @ (q - y) + shrinkage * (theta - prior)
        hess = (x.T * (q * (1.0 - q))) @ x + shrinkage * np.eye(2)
        step = np.linalg.solve(hess, grad)
        theta = theta - step
        if float(np.abs(step).max()) < 1e-8:
            break
    return Adaptation(max(1e-3, float(theta[0])), float(theta[1]), len(y))


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

    def describe(self, confidence: float, decisions: int) -> str:
        """In words, for the run summary, the audit and the workbench (the cut rounded as
        the summary's table rounds it, so the two never disagree)."""
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
            f"{self.auto_links} linked automatically at >= {cut:.3f}, estimated wrong "
            f"{self.estimated_wrong:.1%} ({confidence:.0%} bound {self.upper_bound:.1%}), {where}"
        )


def posterior(prior_wrong: float, reviewed: int, wrong: int) -> tuple[float, float, float]:
    """Beta(a, b) of the share wrong: the prior centred on `prior_wrong` (weight
    PRIOR_WEIGHT), updated with `wrong` of `reviewed`. Returns (a, b, mean)."""
    centre = min(1.0 - 1e-6, max(1e-6, prior_wrong))
    a = PRIOR_WEIGHT * centre + wrong
    b = PRIOR_WEIGHT * (1.0 - centre) + reviewed - wrong
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
    """A source's cut: the lowest at which its auto-links stay within the budget.

    A cut below the global one needs evidence: it lies at a reviewed item's confidence,
    with at least `min_reviewed` reviewed items at or above it and a posterior mean share
    wrong within budget. The global cut (trained
    on other frameworks' held-out rows) stands unless the reviewed items above it were
    wrong more often than the budget. When no cut is allowed the source links nothing
    (cut 1.0). `pending`, `reviewed`: the confidences that decide (adapted)."""
    # A cut lies at a reviewed item's confidence: the evidence reaches down to it, never
    # extrapolated from the top of a band to its untried bottom.
    cuts = sorted(set(reviewed) | {global_threshold}, reverse=True)
    pairs = sorted(zip(reviewed, reviewed_correct, strict=True), key=lambda x: -x[0])
    ordered = sorted(pending, reverse=True)
    best = Certified(1.0, 0.0, 0.0, 0, 0, 0, "none")
    at_r = at_p = wrong = 0
    expected = 0.0
    for cut in cuts:
        while at_r < len(pairs) and pairs[at_r][0] >= cut:
            wrong += not pairs[at_r][1]
            at_r += 1
        while at_p < len(ordered) and ordered[at_p] >= cut:
            expected += 1.0 - ordered[at_p]
            at_p += 1
        a, b, mean = posterior(expected / at_p if at_p else 1.0 - cut, at_r, wrong)
        if cut >= global_threshold:
            allowed, basis = wrong <= policy.budget * at_r, "global"
        else:
            allowed, basis = at_r >= policy.min_reviewed and mean <= policy.budget, "reviewed"
        if allowed:
            bound = upper_bound(a, b, policy.confidence)
            best = Certified(cut, mean, bound, at_r, wrong, at_p, basis)
    return best


# How many decisions a source's calibration sample asks for: enough, all right, to certify
# a band (at least `min_reviewed` above any cut) with room for a few wrong ones.
CALIBRATION_SAMPLE = 40
# A calibration sample is drawn from this share of a source's items, the most confident
# first: the band a cut can reach. Below it the model is too often wrong for a few dozen
# decisions to certify anything (docs/quality.md).
SAMPLE_REACH = 0.7


def calibration_sample(confidences: Sequence[float], chapters: Sequence[str], k: int) -> list[int]:
    """Which `k` of a source's items its reviewers should decide first (their indices):
    the ones whose decisions certify the most auto-links.

    The band of the SAMPLE_REACH most confident items is cut into `k` strata of equal
    size, and one item is taken from each, so the reviewed items interleave the pending
    ones at every confidence and any cut in the band has evidence just above it. Within
    a stratum, the item of the chapter sampled least so far: a first chapter unlike the
    rest (nist's AC family) cannot speak for the whole standard. Reads no label."""
    n = len(confidences)
    if k >= n:
        return list(range(n))
    order = sorted(range(n), key=lambda i: (-confidences[i], i))
    band = order[: max(k, math.ceil(n * SAMPLE_REACH))]
    used: dict[str, int] = {}
    picked: list[int] = []
    for s in range(k):
        stratum = band[s * len(band) // k : (s + 1) * len(band) // k]
        best = min(range(len(stratum)), key=lambda j: (used.get(chapters[stratum[j]], 0), j))
        used[chapters[stratum[best]]] = used.get(chapters[stratum[best]], 0) + 1
        picked.append(stratum[best])
    return sorted(picked)
