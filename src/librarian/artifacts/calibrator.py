"""Confidence calibration: turns a candidate's evidence into the probability it is right.

A logistic model over features of the candidate in its ranked list: its retrieval score,
its margin over the best *other* candidate (a clear winner is more often right than one of
three near-ties at the same score), the cosine of its best linked section, and whether any
linked section describes it at all. Fitted by `librarian train`
(`training/calibrate.py`), saved as JSON; this module only reads and applies it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from librarian.errors import RunError
from librarian.retrieval.evidence import NO_EVIDENCE

FEATURES = ("score", "margin", "evidence", "has_evidence")


class CalibrationError(RunError):
    """A calibrator file is missing, malformed or cannot be fitted."""


def candidate_features(
    scores: Sequence[float], evidence: Sequence[float] | None = None
) -> list[tuple[float, ...]]:
    """FEATURES for each candidate of one ranked list (in its order). `evidence`: each
    candidate's best linked-section cosine, NO_EVIDENCE where none describes it."""
    ev = list(evidence) if evidence is not None else [NO_EVIDENCE] * len(scores)
    # Each candidate's best other: the best score, or for the best itself the runner-up
    # (one pass, not a pass a candidate: k x k for k = 20 was a row's largest cost here).
    best_at, best, second = -1, -math.inf, -math.inf
    for j, score in enumerate(scores):
        if score > best:
            best_at, best, second = j, score, best
        elif score > second:
            second = score
    single = len(scores) == 1
    return [
        (
            score,
            score if single else score - (second if i == best_at else best),
            max(e, 0.0),
            float(e > NO_EVIDENCE),
        )
        for i, (score, e) in enumerate(zip(scores, ev, strict=True))
    ]


@dataclass(frozen=True)
class Calibrator:
    weights: tuple[float, ...]
    intercept: float
    fitted_on: int
    features: tuple[str, ...] = FEATURES
    # The auto-link threshold chosen with it, kept beside the weights so that a card
    # whose threshold was edited is caught (the card lists this file's sha256).
    threshold: float | None = None

    def probability(self, row: Sequence[float]) -> float:
        z = self.intercept + sum(w * x for w, x in zip(self.weights, row, strict=True))
        return 1.0 / (1.0 + math.exp(-z)) if z >= -700 else 0.0

    def probabilities(
        self, scores: Sequence[float], evidence: Sequence[float] | None = None
    ) -> list[float]:
        """Calibrated confidence for each candidate of one ranked list, in the same order."""
        return [self.probability(row) for row in candidate_features(scores, evidence)]

    def as_json(self) -> dict[str, object]:
        return {
            "kind": "logistic",
            "features": list(self.features),
            "weights": list(self.weights),
            "intercept": self.intercept,
            "fitted_on": self.fitted_on,
            "threshold": self.threshold,
        }

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.as_json(), indent=2) + "\n")

    @classmethod
    def from_json(cls, data: object, expected: tuple[str, ...], where: str) -> Calibrator:
        """`expected`: the features this build computes; any other list is refused."""
        try:
            assert isinstance(data, dict)
            features = tuple(str(f) for f in data["features"])
            weights = tuple(float(w) for w in data["weights"])
            threshold = None if data.get("threshold") is None else float(data["threshold"])
            intercept, fitted_on = float(data["intercept"]), int(data["fitted_on"])
            calibrator = cls(weights, intercept, fitted_on, features, threshold)
        except (AssertionError, ValueError, KeyError, TypeError) as exc:
            raise CalibrationError(f"calibrator {where} cannot be read: {exc!r}") from exc
        if features != expected or len(weights) != len(expected):
            raise CalibrationError(
                f"calibrator {where} reads features {list(features)}; this build computes "
                f"{list(expected)}: run `librarian train` again"
            )
        return calibrator

    @classmethod
    def load(cls, path: Path) -> Calibrator:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise CalibrationError(f"calibrator {path} cannot be read: {exc}") from exc
        return cls.from_json(data, FEATURES, str(path))


def top_features(
    scores: Sequence[float], evidence: Sequence[float] | None = None
) -> tuple[float, ...]:
    """FEATURES of the first candidate of a ranked list."""
    if not scores:
        raise CalibrationError("a ranked list with no candidates has no top score")
    return candidate_features(scores, evidence)[0]
