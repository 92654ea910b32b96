"""Labelled sections scored as a run scores them (the pipeline's own retrieve stage, with
the run's top k and routing), for calibration and evaluation.

A section's evidence never includes its own framework's links (`EvidenceIndex.excluding`):
the evidence a new standard's section sees at run time comes from other standards only,
so the scores training learns from must come from the same situation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from librarian.artifacts.calibrator import Calibrator, top_features
from librarian.models.seams import Vectors
from librarian.pipeline.api import RetrieveStage
from librarian.pipeline.ingest import section_from_text
from librarian.retrieval.evidence import EvidenceIndex
from librarian.retrieval.flat import ScoredHub
from librarian.training.calibrate import fit_calibrator
from librarian.training.links import LinkedSection

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class ScoredSection:
    section: LinkedSection
    ids: tuple[str, ...]  # retrieved CREs, best first
    scores: tuple[float, ...]  # their retrieval scores
    evidence: tuple[float, ...]  # their best linked-section cosines (NO_EVIDENCE: none)
    hits: tuple[ScoredHub, ...] = ()  # as the retrieve stage returned them

    @property
    def top_correct(self) -> bool:
        return bool(self.ids) and self.ids[0] in self.section.cre_ids

    @property
    def features(self) -> tuple[float, ...]:
        return top_features(self.scores, self.evidence)


def score_sections(
    sections: Sequence[LinkedSection],
    vectors: Vectors,
    stage: RetrieveStage,
    evidence: EvidenceIndex,
    column: Mapping[str, int],
) -> list[ScoredSection]:
    """Each section retrieved with the evidence of every framework but its own.
    `column`: each CRE's column in the hub index."""
    out: list[ScoredSection | None] = [None] * len(sections)
    for framework in sorted({s.framework_id for s in sections}):
        rows = [i for i, s in enumerate(sections) if s.framework_id == framework]
        as_run = [section_from_text(sections[i].text) for i in rows]
        retrieved = stage.search(as_run, vectors[rows], evidence.excluding({framework}))
        hits, best = retrieved.hits, retrieved.best
        assert best is not None
        for k, i in enumerate(rows):
            ids = tuple(h.cre_id for h in hits[k])
            out[i] = ScoredSection(
                sections[i],
                ids,
                tuple(h.score for h in hits[k]),
                tuple(float(best[k, column[c]]) for c in ids),
                tuple(hits[k]),
            )
    return [s for s in out if s is not None]


def out_of_fold_confidence(
    scored: Sequence[ScoredSection], progress: Progress | None = None
) -> tuple[list[float], dict[str, Calibrator]]:
    """Each framework's confidences from a calibrator fitted without that framework, and
    those calibrators by the framework they leave out."""
    frameworks = sorted({s.section.framework_id for s in scored})
    confidence = [0.0] * len(scored)
    folds: dict[str, Calibrator] = {}
    for done, held in enumerate(frameworks, start=1):
        calibrator = folds[held] = calibrate([s for s in scored if s.section.framework_id != held])
        for i, s in enumerate(scored):
            if s.section.framework_id == held:
                confidence[i] = calibrator.probability(s.features)
        if progress:
            progress("calibration folds", done, len(frameworks))
    return confidence, folds


def calibrate(scored: Sequence[ScoredSection]) -> Calibrator:
    return fit_calibrator([s.features for s in scored], [s.top_correct for s in scored])
