"""The source-level model `librarian train` fits (source.json): the rule from a source's
shape to its priors, the calibrator that reads collective evidence, and its threshold.
This module only reads and applies it (training/sources.py fits it)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from librarian.artifacts.calibrator import (
    FEATURES,
    CalibrationError,
    Calibrator,
    candidate_features,
)
from librarian.retrieval.collective import Collective, PriorRule

SOURCE_MODEL_NAME = "source.json"
JOINT_FEATURES = (
    *FEATURES,
    "was_top",
    "claimants",
    "claim_margin",
    "reuse_penalty",
    "inner_penalty",
)


def joint_features(
    ids: Sequence[str],
    scores: Sequence[float],
    evidence: Sequence[float] | None,
    collective: Collective,
) -> list[tuple[float, ...]]:
    """JOINT_FEATURES of each candidate of one ranked list (in its order)."""
    base = candidate_features(scores, evidence)
    priors = collective.priors
    out: list[tuple[float, ...]] = []
    for cre, row in zip(ids, base, strict=True):
        rivalry = collective.rivalry.get(cre)
        was_top = float(rivalry.was_top) if rivalry else 0.0
        claimants = math.log1p(rivalry.claimants) if rivalry else 0.0
        margin = rivalry.claim_margin if rivalry else 0.0
        out.append((*row, was_top, claimants, margin, priors.reuse_penalty, priors.inner_penalty))
    return out


@dataclass(frozen=True)
class SourceModel:
    rule: PriorRule
    calibrator: Calibrator  # over JOINT_FEATURES
    threshold: float  # for items linked jointly, before a source's own decisions
    # How many decisions the global calibrator weighs as, in a source's adaptation
    # (learnt by `train`: how far a framework's first decisions mislead about the rest).
    shrinkage: float = 10.0

    def save(self, path: Path) -> None:
        payload = {
            "rule": self.rule.as_json(),
            "calibrator": self.calibrator.as_json(),
            "threshold": self.threshold,
            "shrinkage": self.shrinkage,
        }
        path.write_text(json.dumps(payload, indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> SourceModel:
        try:
            data = json.loads(path.read_text())
            rule = PriorRule.from_json(data["rule"])
            threshold, shrinkage = float(data["threshold"]), float(data["shrinkage"])
            calibrator = Calibrator.from_json(data["calibrator"], JOINT_FEATURES, str(path))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CalibrationError(f"source model {path} cannot be read: {exc}") from exc
        if not 0.0 <= threshold <= 1.0:
            raise CalibrationError(f"source model {path}: threshold {threshold} not in [0, 1]")
        if not 0.0 < shrinkage < math.inf:
            raise CalibrationError(f"source model {path}: shrinkage {shrinkage} not positive")
        return cls(rule, calibrator, threshold, shrinkage)


def joint_probabilities(
    model: SourceModel,
    ids: Sequence[str],
    scores: Sequence[float],
    evidence: Sequence[float] | None,
    collective: Collective,
) -> list[float]:
    """The global source-level confidence of each candidate of one ranked list."""
    return [
        model.calibrator.probability(row)
        for row in joint_features(ids, scores, evidence, collective)
    ]


# A source's own decisions adapt its calibration once it has this many; before, its
# items are scored and thresholded by the global rule (cold start).
MIN_SOURCE_DECISIONS = 20
# The shrinkages `train` chooses among (docs/quality.md).
SHRINKAGES = (1.0, 3.0, 10.0, 30.0, 100.0)
MAX_WRONG_RATE = 0.03


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
    Gaussian prior of strength `shrinkage` around (1, 0) (Newton steps; two parameters)."""
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
    return Adaptation(float(theta[0]), float(theta[1]), len(y))


def source_threshold(
    pending: Sequence[float],
    reviewed: Sequence[float],
    reviewed_correct: Sequence[bool],
    max_wrong: float = MAX_WRONG_RATE,
) -> float:
    """The lowest cut at which this source's auto-links stay at most `max_wrong` wrong:
    the expected share wrong of the pending items above it (by their adapted confidence)
    is at most `max_wrong`, and the reviewed items above it were wrong no more often
    (0 of fewer than 1 / max_wrong). 1.0 when no cut satisfies both (nothing links)."""
    order = sorted(pending, reverse=True)
    best, expected_wrong = 1.0, 0.0
    for n, cut in enumerate(order, start=1):
        expected_wrong += 1.0 - cut
        if n < len(order) and order[n] == cut:
            continue
        if expected_wrong / n > max_wrong:
            break
        above = [ok for p, ok in zip(reviewed, reviewed_correct, strict=True) if p >= cut]
        if sum(not ok for ok in above) <= max_wrong * len(above):
            best = cut
    return best
