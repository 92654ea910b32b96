"""The model stages, each one object with its component: C.2 explicit, C.3 embed,
C.4 route + retrieve, C.6 rerank, C.7 score (C.5 is source_level.py).

Each takes the batch's records and returns new ones; none reads a row from anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from librarian.artifacts.calibrator import Calibrator
from librarian.artifacts.source_model import SourceModel, joint_probabilities
from librarian.catalogue.hub import Hub
from librarian.models.seams import Embedder, PairScorer, Vectors
from librarian.pipeline import components as ids
from librarian.pipeline.components import Component
from librarian.pipeline.explicit import ExplicitReference, find_references
from librarian.pipeline.ingest import query_text
from librarian.policy import Adaptation
from librarian.retrieval.collective import Collective
from librarian.retrieval.evidence import EVIDENCE_WEIGHT, EvidenceIndex, evidence_bonus
from librarian.retrieval.flat import Retriever, ScoredHub, Search
from librarian.retrieval.rerank import needs_rerank, rerank_scores
from librarian.routing.router import Router
from librarian.schemas.envelopes import Candidate
from librarian.schemas.records import Section
from librarian.schemas.routing import RoutingDecision


class ExplicitStage:
    """Sections citing a CRE are decided without a model; the rest go on."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.component = Component("explicit", ids.EXPLICIT, note="no model")

    def find(self, section: Section) -> ExplicitReference | None:
        return find_references(f"{section.title_hint or ''}\n{section.text}", self.hub.by_id)


@dataclass(frozen=True)
class Embedded:
    queries: list[str]
    vectors: Vectors
    truncated: int
    cut: tuple[int, ...] = ()  # which queries (by position) were cut to fit the model


class EmbedStage:
    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    @property
    def component(self) -> Component:
        settings = {"fingerprint": self.embedder.fingerprint[:16]}
        return Component("embed", ids.EMBED, uses=self.embedder.name, settings=settings)

    def run(self, sections: Sequence[Section]) -> Embedded:
        queries = [query_text(s) for s in sections]
        cut = tuple(self.embedder.truncated(queries))  # summary.md names them
        return Embedded(queries, self.embedder.encode(queries), len(cut), cut)


@dataclass(frozen=True)
class Retrieved:
    routing: list[RoutingDecision]
    hits: list[list[ScoredHub]]
    best: NDArray[np.float32] | None  # each hub's best linked-section cosine, per section


class RetrieveStage:
    """Route each section to the collections it may search, then search them: dense
    scores plus `EVIDENCE_WEIGHT` x the best linked-section cosine, top k."""

    def __init__(
        self,
        router: Router,
        retriever: Retriever,
        evidence: EvidenceIndex | None,
        top_k: int,
        min_score: float,
    ) -> None:
        self.router, self.retriever, self.evidence = router, retriever, evidence
        self.top_k, self.min_score = top_k, min_score

    @property
    def components(self) -> tuple[Component, Component]:
        route = Component(
            "route",
            ids.ROUTE,
            settings={"mode": self.router.mode},
            note=f"routing:{self.router.mode}",
        )
        evidence = (
            f"+ {EVIDENCE_WEIGHT} x best of {self.evidence.size} linked sections"
            if self.evidence is not None
            else "no linked-section evidence"
        )
        retrieve = Component(
            "retrieve",
            ids.RETRIEVE,
            uses=self.retriever.name,
            settings={"top_k": self.top_k, "min_score": self.min_score},
            note=f"top{self.top_k}; {evidence}",
        )
        return route, retrieve

    def run(
        self,
        sections: Sequence[Section],
        vectors: Vectors,
        evidence: EvidenceIndex | None = None,
    ) -> Retrieved:
        """`evidence`: another evidence index than the stage's own (training scores each
        framework with the evidence of the others only)."""
        evidence = evidence or self.evidence
        best = evidence.best(vectors) if evidence is not None else None
        routing = [self.router.route(s, vectors[i]) for i, s in enumerate(sections)]
        allowed = [self.router.allowed(d) for d in routing]
        narrowed = allowed if any(a is not None for a in allowed) else None
        bonus = evidence_bonus(best) if best is not None else None
        hits = self.retriever.search(vectors, Search(self.top_k, self.min_score, narrowed, bonus))
        return Retrieved(routing, hits, best)


class RerankStage:
    def __init__(self, scorer: PairScorer | None, hub: Hub, gap: float | None) -> None:
        self.scorer, self.hub, self.gap = scorer, hub, gap

    @property
    def component(self) -> Component:
        if self.scorer is None:
            return Component("rerank", ids.RERANK_NONE, note="no reranker configured")
        note = f"where top-2 retrieval gap < {self.gap}" if self.gap is not None else None
        return Component(
            "rerank",
            ids.RERANK,
            uses=self.scorer.name,
            settings={"rerank_gap": self.gap},
            note=note,
        )

    def run(self, queries: list[str], hits: list[list[ScoredHub]]) -> list[list[float] | None]:
        out: list[list[float] | None] = [None] * len(hits)
        if self.scorer is None:
            return out
        rows = [i for i, n in enumerate(needs_rerank(hits, self.gap)) if n]
        scored = rerank_scores(
            [queries[i] for i in rows], [hits[i] for i in rows], self.hub, self.scorer
        )
        for i, scores in zip(rows, scored, strict=True):
            out[i] = scores
        return out


@dataclass(frozen=True)
class ToScore:
    """One section's candidates as C.7 sees them: the retrieval hits (all k, in order),
    their best linked-section cosines (None: no evidence), and the ranked ones to score."""

    hits: Sequence[ScoredHub]
    evidence: Sequence[float] | None
    ranked: Sequence[Candidate]
    collective: Collective | None = None  # C.5 linked its source as a whole
    adaptation: Adaptation | None = None  # its source's own recalibration
    known: Mapping[str, float] | None = None  # C.5's confidences of the hits (joint only)


class Scaler(Protocol):
    """C.7's seam: a confidence in [0, 1] for each ranked candidate of one section."""

    component: Component

    def confidences(self, row: ToScore) -> Mapping[str, float]: ...


class CalibratedScaler:
    """The calibrator; a row its source linked as a whole is scored by the source model's
    calibrator over the collective evidence too, then by its source's adaptation."""

    def __init__(self, calibrator: Calibrator, fitted: str, joint: SourceModel | None) -> None:
        self.calibrator, self.joint = calibrator, joint
        kind = ids.SCORE_JOINT if joint is not None else ids.SCORE_CALIBRATED
        what = "score, margin, evidence" + (" [+ collective evidence]" if joint else "")
        self.component = Component("score", kind, note=f"logistic({what}) from {fitted}")

    def confidences(self, row: ToScore) -> Mapping[str, float]:
        cres = [h.cre_id for h in row.hits]
        scores = [h.score for h in row.hits]
        if self.joint is not None and row.collective is not None and row.known is not None:
            # C.5 ordered the hits by these very numbers (the same model and features, which
            # do not depend on the hits' order): not computed twice.
            probabilities = [row.known[c] for c in cres]
        elif self.joint is not None and row.collective is not None:
            probabilities = joint_probabilities(
                self.joint, cres, scores, row.evidence, row.collective
            )
            if row.adaptation is not None:
                probabilities = [row.adaptation.apply(p) for p in probabilities]
        else:
            probabilities = self.calibrator.probabilities(scores, row.evidence)
        by_id = dict(zip(cres, probabilities, strict=True))
        return {c.cre_id: _unit(by_id[c.cre_id]) for c in row.ranked}


class RawScaler:
    """Without a calibrator: the reranker's score when it ran, else the cosine, clamped."""

    def __init__(self, reranked: bool, why: str) -> None:
        kind = ids.SCORE_RAW_RERANK if reranked else ids.SCORE_RAW_COSINE
        self.component = Component("score", kind, note=why)

    def confidences(self, row: ToScore) -> Mapping[str, float]:
        return {c.cre_id: _unit(_raw(c)) for c in row.ranked}


def _raw(candidate: Candidate) -> float:
    return candidate.score_rerank if candidate.score_rerank is not None else candidate.score_vector


def _unit(value: float) -> float:
    return min(1.0, max(0.0, value))
