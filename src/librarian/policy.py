"""The decision policy: which confidence decides, and from what evidence a source's cut.

One number orders a row's suggestions and decides it: the calibrated confidence (global
calibrator, collective evidence, the source's own adaptation). A source's cut is chosen
here and nowhere else, under one of two guarantees the team chooses (`RiskPolicy.risk`):

- `expected`: the expected share wrong of the source's auto-links is at most the budget
  (the posterior mean of a Beta-binomial);
- `bound`: the share wrong is at most the budget with probability at least `confidence`
  (the posterior's upper quantile).

The prior on a band's share wrong is centred on what the model expects of it (the mean of
1 - confidence of the items it would link), scaled by `prior_scale` and weighing
`prior_weight` items: both learnt by `train` across the frameworks held out in turn (how
far a framework's realised share wrong departs from what the calibrator expects), and
saved with the models. The evidence is the source's reviewed items at or above a cut.

The cuts are tested in a fixed sequence, from the trained global cut down through the
reviewed items' confidences (each with at least `min_reviewed` reviewed items above it),
and the first that fails ends the sequence (fixed-sequence testing, as in Learn-then-Test):
the cut is never read off the one place below a failure where the sample looked lucky.
docs/quality.md has the rule, its guarantee, its assumptions and the simulation that
checks them (`librarian eval --review-order random --draws N`).

Pure: no I/O, nothing read but the numbers given.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from librarian.settings import default_of

# How many reviewed items the model's own expectation weighs as, in a source's prior,
# when no learnt prior is given (models from before the prior was learnt; tests).
PRIOR_WEIGHT = 2.0
RISKS = ("expected", "bound")


@dataclass(frozen=True)
class RiskPolicy:
    """The risk a team accepts: at most `budget` of a source's auto-links wrong, in
    expectation (`risk` "expected") or with probability `confidence` ("bound"); a cut
    below the global one resting on at least `min_reviewed` reviewed items. `prior_weight`
    and `prior_scale`: the learnt prior (source.json)."""

    budget: float = default_of("wrong_budget")
    confidence: float = default_of("risk_confidence")
    min_reviewed: int = 10
    risk: str = default_of("risk")
    prior_weight: float = PRIOR_WEIGHT
    prior_scale: float = 1.0

    def guarantee(self) -> str:
        """The promise, in words, wherever a cut is shown."""
        if self.risk == "bound":
            return f"share wrong <= {self.budget:.0%} with probability >= {self.confidence:.0%}"
        return f"expected share wrong <= {self.budget:.0%}"

    def prior_centre(self, expected_wrong: float) -> float:
        return min(0.999, max(1e-6, self.prior_scale * expected_wrong))

    def passes(self, mean: float, bound: float) -> bool:
        return (bound if self.risk == "bound" else mean) <= self.budget


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


# How many decisions a source's calibration sample asks for: enough, all right, to certify
# a band (at least `min_reviewed` above any cut) with room for a few wrong ones.
CALIBRATION_SAMPLE = 40
# A calibration sample is drawn from this share of a source's items, the most confident
# first: the band a cut can reach. Below it the model is too often wrong for a few dozen
# decisions to certify anything (docs/quality.md).
SAMPLE_REACH = 0.7


def calibration_sample(confidences: Sequence[float], k: int, seed: str) -> list[int]:
    """Which `k` of a source's items its reviewers should decide first (their indices):
    a probability sample of the band a cut can reach.

    The band of the SAMPLE_REACH most confident items is cut into `k` strata of equal
    size (by confidence), and one item is drawn at random from each, seeded by `seed`
    (the source's key: the same source gets the same sample). So the reviewed items
    interleave the pending ones at every confidence, any cut in the band has evidence
    just above it, and within a stratum every item was as likely to be drawn: the reviewed
    items speak for the pending ones of their band. The strata differ in size by at most
    one item, so the inclusion weights are equal to within that and the share wrong is
    estimated unweighted. Reads no label."""
    n = len(confidences)
    if k >= n:
        return list(range(n))
    order = sorted(range(n), key=lambda i: (-confidences[i], i))
    band = order[: max(k, math.ceil(n * SAMPLE_REACH))]
    draw = random.Random(hashlib.sha256(seed.encode("utf-8")).hexdigest())
    picked = [draw.choice(band[s * len(band) // k : (s + 1) * len(band) // k]) for s in range(k)]
    return sorted(picked)
