"""One source's recalibration of the global confidence, from its reviewers' decisions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


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
