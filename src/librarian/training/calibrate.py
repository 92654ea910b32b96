"""Fitting the confidence calibrator, and measuring calibration (ECE, reliability bins,
the auto-link threshold). What is fitted is saved as `artifacts.calibrator.Calibrator`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from librarian.artifacts.calibrator import CalibrationError, Calibrator


def fit_calibrator(
    features: Sequence[Sequence[float]], correct: Sequence[bool], strength: float = 100.0
) -> Calibrator:
    """Fit P(top-1 is right | features). Needs both right and wrong examples. `strength`:
    the inverse of the regularisation (scikit-learn's C)."""
    labels = np.asarray(correct, dtype=bool)
    if len(labels) < 10 or labels.all() or not labels.any():
        raise CalibrationError(
            f"calibration needs right and wrong top-1 examples; got {int(labels.sum())} right "
            f"of {len(labels)}"
        )
    from sklearn.linear_model import LogisticRegression

    # Mild regularisation: four features, hundreds of rows; C=1 on cosine-scale inputs
    # would shrink the slopes and make every confidence drift towards the base rate.
    model = LogisticRegression(C=strength, max_iter=2000)
    model.fit(np.asarray(features, dtype=np.float64), labels)
    return Calibrator(
        weights=tuple(float(w) for w in model.coef_[0]),
        intercept=float(model.intercept_[0]),
        fitted_on=len(labels),
    )


@dataclass(frozen=True)
class ReliabilityBin:
    lower: float
    upper: float
    count: int
    mean_confidence: float
    accuracy: float


def reliability(
    confidence: Sequence[float], correct: Sequence[bool], bins: int = 10
) -> tuple[float, list[ReliabilityBin]]:
    """Expected calibration error over equal-width bins, and the bins themselves."""
    conf = np.asarray(confidence, dtype=np.float64)
    hit = np.asarray(correct, dtype=np.float64)
    if conf.size == 0:
        return 0.0, []
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(conf, edges[1:-1], right=True), 0, bins - 1)
    ece = 0.0
    out: list[ReliabilityBin] = []
    for b in range(bins):
        mask = which == b
        n = int(mask.sum())
        if n == 0:
            out.append(ReliabilityBin(float(edges[b]), float(edges[b + 1]), 0, 0.0, 0.0))
            continue
        mean_conf = float(conf[mask].mean())
        accuracy = float(hit[mask].mean())
        ece += n / conf.size * abs(mean_conf - accuracy)
        out.append(ReliabilityBin(float(edges[b]), float(edges[b + 1]), n, mean_conf, accuracy))
    return float(ece), out
