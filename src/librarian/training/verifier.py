"""Fitting the verifier (`artifacts.verifier`): the confidence shown with a first
suggestion, from the joint reading, the section-alone reading and the CRE's own words,
on framework-held-out rows only.

Every row is read as a run reads it for a framework the models never saw: its joint
confidence from the joint calibrator fitted without its framework (`SourceFit.folds`),
its section-alone confidence from the calibrator fitted without it (`alone_folds`), and
its text against the names of its candidates. The verifier's own out-of-fold confidences
(each framework scored by a verifier fitted on the others) are what the source model's
threshold, shrinkage and prior are then chosen on, and what the card reports beside the
joint confidence's (AUROC, pooled and per framework; the most confident prefix at <= 1%
and <= 3% wrong): on the card even where it separates worse than the joint confidence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from librarian.artifacts.calibrator import FEATURES, Calibrator
from librarian.artifacts.verifier import (
    VERIFIER_FEATURES,
    content_words,
    features,
    name_overlaps,
)
from librarian.catalogue.hub import Hub
from librarian.training.calibrate import fit_calibrator
from librarian.training.sources import SourceFit

# Regularised more than the calibrators (C=100): on frameworks it never saw, C=10 kept
# the separation of milder slopes and the calibration of steeper ones (docs/quality.md).
STRENGTH = 10.0


@dataclass(frozen=True)
class VerifierFit:
    model: Calibrator  # fitted on every framework's rows
    oof: list[float]  # each row's confidence from a verifier fitted without its framework
    card: dict[str, Any]


def readings(
    fit: SourceFit, alone_folds: Mapping[str, Calibrator], hub: Hub
) -> list[tuple[float, ...]]:
    """VERIFIER_FEATURES of each row's first suggestion, out of fold."""
    names = {n.cre_id: content_words(n.name) for n in hub.nodes}
    out: list[tuple[float, ...]] = []
    for row in fit.rows:
        framework = row.scored.section.framework_id
        first = row.first(fit.folds[framework], fit.chosen_margin)
        features_of_first = row.candidates[first][0]
        joint = fit.folds[framework].probability(features_of_first)
        alone = alone_folds[framework].probability(features_of_first[: len(FEATURES)])
        words = content_words(row.scored.section.text)
        overlaps = name_overlaps(words, [names.get(c, frozenset()) for c in row.ids])
        out.append(features(joint, alone, overlaps, first))
    return out


def fit_verifier(fit: SourceFit, alone_folds: Mapping[str, Calibrator], hub: Hub) -> VerifierFit:
    frameworks = [r.scored.section.framework_id for r in fit.rows]
    x = readings(fit, alone_folds, hub)
    y = fit.correct
    oof = [0.0] * len(x)
    for held in sorted(set(frameworks)):
        rest = [i for i, f in enumerate(frameworks) if f != held]
        model = _fit([x[i] for i in rest], [y[i] for i in rest])
        for i, f in enumerate(frameworks):
            if f == held:
                oof[i] = model.probability(x[i])
    model = _fit(x, y)
    card = {
        "features": list(VERIFIER_FEATURES),
        "weights": [round(w, 4) for w in model.weights],
        "out_of_fold": separation(frameworks, fit.oof, oof, y),
    }
    return VerifierFit(model, oof, card)


def _fit(x: Sequence[tuple[float, ...]], y: Sequence[bool]) -> Calibrator:
    fitted = fit_calibrator(x, y, STRENGTH)
    return Calibrator(fitted.weights, fitted.intercept, fitted.fitted_on, VERIFIER_FEATURES)


def separation(
    frameworks: Sequence[str], joint: Sequence[float], verified: Sequence[float], y: Sequence[bool]
) -> dict[str, Any]:
    """AUROC of the joint confidence and of the verifier's, pooled and per framework, and
    each one's most confident prefix at <= 1% and <= 3% wrong (pooled)."""
    from sklearn.metrics import roc_auc_score

    def auroc(scores: Sequence[float], rows: Sequence[int]) -> float | None:
        labels = [y[i] for i in rows]
        if not 0 < sum(labels) < len(labels):
            return None
        return round(float(roc_auc_score(labels, [scores[i] for i in rows])), 4)

    everyone = list(range(len(y)))
    out: dict[str, Any] = {
        "rows": len(y),
        "auroc_joint": auroc(joint, everyone),
        "auroc": auroc(verified, everyone),
        "prefix_1pct_joint": prefix(joint, y, 0.01),
        "prefix_1pct": prefix(verified, y, 0.01),
        "prefix_3pct_joint": prefix(joint, y, 0.03),
        "prefix_3pct": prefix(verified, y, 0.03),
    }
    out["by_framework"] = {
        f: {
            "joint": auroc(joint, [i for i, g in enumerate(frameworks) if g == f]),
            "verified": auroc(verified, [i for i, g in enumerate(frameworks) if g == f]),
        }
        for f in sorted(set(frameworks))
    }
    return out


def prefix(scores: Sequence[float], correct: Sequence[bool], tolerance: float) -> int:
    """Rows in the most confident prefix whose share wrong is at most `tolerance` (what
    any valid cut on these confidences could reach, read off the answers)."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    best = wrong = 0
    for n, i in enumerate(order, start=1):
        wrong += not correct[i]
        if wrong <= tolerance * n:
            best = n
    return best
