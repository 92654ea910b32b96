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
        out.append(
            (
                *row,
                was_top,
                claimants,
                margin,
                priors.reuse_penalty,
                priors.inner_penalty,
            )
        )
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


# The shrinkages `train` chooses among (docs/quality.md).
SHRINKAGES = (1.0, 3.0, 10.0, 30.0, 100.0)
