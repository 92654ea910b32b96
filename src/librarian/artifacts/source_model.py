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
from librarian.artifacts.verifier import VERIFIER_FEATURES
from librarian.retrieval.collective import Collective, PriorRule

SOURCE_MODEL_NAME = "source.json"
JOINT_FEATURES = (
    *FEATURES,
    "was_top",
    "claimants",
    "claim_margin",
    "reuse_penalty",
    "inner_penalty",
    "chosen",
    "chosen_distinct",
)


def joint_features(
    ids: Sequence[str],
    scores: Sequence[float],
    evidence: Sequence[float] | None,
    collective: Collective,
) -> list[tuple[float, ...]]:
    """JOINT_FEATURES of each candidate of one ranked list (in its order). `chosen`: the
    candidate is the one the source's assignment chose for its item; `chosen_distinct`:
    the same, in a source whose sections rarely share a CRE (a reuse penalty applies),
    where the assignment knows most."""
    base = candidate_features(scores, evidence)
    priors = collective.priors
    out: list[tuple[float, ...]] = []
    for cre, row in zip(ids, base, strict=True):
        rivalry = collective.rivalry.get(cre)
        was_top = float(rivalry.was_top) if rivalry else 0.0
        claimants = math.log1p(rivalry.claimants) if rivalry else 0.0
        margin = rivalry.claim_margin if rivalry else 0.0
        chosen = float(cre == collective.chosen_id)
        distinct = chosen if priors.reuse_penalty > 0.0 else 0.0
        out.append(
            (
                *row,
                was_top,
                claimants,
                margin,
                priors.reuse_penalty,
                priors.inner_penalty,
                chosen,
                distinct,
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
    # How much more confident than the assignment's choice another candidate must be to
    # come first (learnt leave-one-framework-out by `train`; 1.0: the choice always).
    chosen_margin: float = 0.0
    # The prior on a band's share wrong (`policy.DecisionPolicy`): centred on prior_scale x the
    # calibrator's expected share wrong, weighing prior_weight items (learnt by `train`
    # across the frameworks held out in turn).
    prior_weight: float = 2.0
    prior_scale: float = 1.0
    # The confidence shown with a first suggestion (`artifacts.verifier`; None: the joint
    # calibrator's, as models trained before it have it).
    verifier: Calibrator | None = None

    def save(self, path: Path) -> None:
        payload = {
            "rule": self.rule.as_json(),
            "calibrator": self.calibrator.as_json(),
            "threshold": self.threshold,
            "shrinkage": self.shrinkage,
            "chosen_margin": self.chosen_margin,
            "prior_weight": self.prior_weight,
            "prior_scale": self.prior_scale,
            "verifier": self.verifier.as_json() if self.verifier is not None else None,
        }
        path.write_text(json.dumps(payload, indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> SourceModel:
        try:
            data = json.loads(path.read_text())
            rule = PriorRule.from_json(data["rule"])
            threshold, shrinkage = float(data["threshold"]), float(data["shrinkage"])
            margin = float(data["chosen_margin"])
            prior = float(data["prior_weight"]), float(data["prior_scale"])
            calibrator = Calibrator.from_json(data["calibrator"], JOINT_FEATURES, str(path))
            stored = data.get("verifier")
            verifier = (
                Calibrator.from_json(stored, VERIFIER_FEATURES, f"{path} (verifier)")
                if stored is not None
                else None
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CalibrationError(f"source model {path} cannot be read: {exc}") from exc
        if not 0.0 <= threshold <= 1.0:
            raise CalibrationError(f"source model {path}: threshold {threshold} not in [0, 1]")
        if not 0.0 < shrinkage < math.inf:
            raise CalibrationError(f"source model {path}: shrinkage {shrinkage} not positive")
        if not 0.0 <= margin <= 1.0:
            raise CalibrationError(f"source model {path}: chosen_margin {margin} not in [0, 1]")
        if not all(0.0 < v < math.inf for v in prior):
            raise CalibrationError(f"source model {path}: prior {prior} not positive")
        return cls(rule, calibrator, threshold, shrinkage, margin, *prior, verifier)


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


def first_order(
    ids: Sequence[str], probabilities: Sequence[float], chosen: str | None, margin: float
) -> list[int]:
    """Indices of `ids` in the order a row shows them: the most confident first, except
    that the assignment's `chosen` CRE stays first unless another candidate's confidence
    exceeds its own by more than `margin`; ties keep the given order."""
    order = sorted(range(len(ids)), key=lambda j: (-probabilities[j], j))
    at = next((j for j, cre in enumerate(ids) if cre == chosen), None)
    if at is None or not order or probabilities[order[0]] > probabilities[at] + margin:
        return order
    return [at, *(j for j in order if j != at)]


# The chosen margins `train` chooses among (1.0: the assignment's choice always first).
CHOSEN_MARGINS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
# The shrinkages `train` chooses among (docs/quality.md).
SHRINKAGES = (1.0, 3.0, 10.0, 30.0, 100.0)
