"""Confidence calibration: turns a candidate's scores into the probability it is right.

A logistic model over two features of the ranked list: the candidate's own score and
its margin over the best *other* candidate (a clear winner is more often right than one
of three near-ties at the same score). Fitted by `librarian train` on rows from
frameworks the scorer under calibration did not learn from, saved as JSON.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from librarian.errors import RunError

FEATURES = ("score", "margin")


class CalibrationError(RunError):
    """A calibrator file is missing, malformed or cannot be fitted."""


@dataclass(frozen=True)
class Calibrator:
    weights: tuple[float, float]
    intercept: float
    score_name: str
    fitted_on: int

    def probability(self, score: float, margin: float) -> float:
        z = self.intercept + self.weights[0] * score + self.weights[1] * margin
        return 1.0 / (1.0 + math.exp(-z)) if z >= -700 else 0.0

    def probabilities(self, scores: Sequence[float]) -> list[float]:
        """Calibrated confidence for each candidate of one ranked list, in the same order."""
        out: list[float] = []
        for i, score in enumerate(scores):
            others = [s for j, s in enumerate(scores) if j != i]
            margin = score - max(others) if others else score
            out.append(self.probability(score, margin))
        return out

    def save(self, path: Path) -> None:
        payload = {"kind": "logistic(score, margin)", "features": list(FEATURES), **asdict(self)}
        path.write_text(json.dumps(payload, indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> Calibrator:
        try:
            data = json.loads(path.read_text())
            weights = tuple(float(w) for w in data["weights"])
            if len(weights) != 2:
                raise ValueError(f"expected 2 weights, got {len(weights)}")
            return cls(
                weights=(weights[0], weights[1]),
                intercept=float(data["intercept"]),
                score_name=str(data["score_name"]),
                fitted_on=int(data["fitted_on"]),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CalibrationError(f"calibrator {path} cannot be read: {exc}") from exc


def top_features(scores: Sequence[float]) -> tuple[float, float]:
    """(score, margin) of the best candidate of a ranked list."""
    if not scores:
        raise CalibrationError("a ranked list with no candidates has no top score")
    ordered = sorted(scores, reverse=True)
    second = ordered[1] if len(ordered) > 1 else 0.0
    return ordered[0], ordered[0] - second


def fit_calibrator(
    features: Sequence[tuple[float, float]], correct: Sequence[bool], score_name: str
) -> Calibrator:
    """Fit P(top-1 is right | score, margin). Needs both right and wrong examples."""
    labels = np.asarray(correct, dtype=bool)
    if len(labels) < 10 or labels.all() or not labels.any():
        raise CalibrationError(
            f"calibration needs right and wrong top-1 examples; got {int(labels.sum())} right "
            f"of {len(labels)}"
        )
    from sklearn.linear_model import LogisticRegression

    # Mild regularisation: two features, hundreds of rows; C=1 on cosine-scale inputs
    # would shrink the slope and make every confidence drift towards the base rate.
    model = LogisticRegression(C=100.0, max_iter=1000)
    model.fit(np.asarray(features, dtype=np.float64), labels)
    w = model.coef_[0]
    return Calibrator(
        weights=(float(w[0]), float(w[1])),
        intercept=float(model.intercept_[0]),
        score_name=score_name,
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


def choose_threshold(
    confidence: Sequence[float], correct: Sequence[bool], max_wrong_rate: float
) -> float:
    """The lowest threshold whose auto-links are wrong at most `max_wrong_rate` of the time.

    Scanned from the top down over the observed confidences; if no cut is that precise,
    1.0 (nothing auto-links) rather than a threshold the data does not support.
    """
    conf: NDArray[np.float64] = np.asarray(confidence, dtype=np.float64)
    hit = np.asarray(correct, dtype=bool)
    order = np.argsort(-conf, kind="stable")
    best = 1.0
    wrong = 0
    for n, idx in enumerate(order, start=1):
        wrong += int(not hit[idx])
        # Only cut between distinct confidences, so every row at the cut is included.
        if n < len(order) and conf[order[n]] == conf[idx]:
            continue
        if wrong / n <= max_wrong_rate:
            best = float(conf[idx])
    return best
