"""The stages of C.2-C.4 and C.6, each one object with its components and one `run` over
a batch (`batches.PrepareStage`, `batches.CompleteStage`), and C.7's `Scaler` seam (C.5 is
source_level.py; C.7-C.10's stages are emit.py). `factory.assemble` lists them in order.

None reads a row from anywhere; each fills its part of the batch record it is given.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from librarian.artifacts.calibrator import Calibrator
from librarian.artifacts.source_model import SourceModel, joint_probabilities
from librarian.catalogue.hub import Hub
from librarian.models.seams import Embedder, PairScorer, Vectors
from librarian.pipeline import components as ids
from librarian.pipeline.batches import Completing, Embedded, Prepared, Priors, Retrieved
from librarian.pipeline.components import Component, describe
from librarian.pipeline.envelopes import Emitted, RunContext, envelope
from librarian.pipeline.explicit import ExplicitReference, find_references
from librarian.pipeline.ingest import query_text
from librarian.pipeline.safety import SafetyGuard, SafetyInput
from librarian.policy import Adaptation
from librarian.policy.verdict import decide
from librarian.retrieval.collective import Collective
from librarian.retrieval.evidence import EVIDENCE_WEIGHT, EvidenceIndex, evidence_bonus
from librarian.retrieval.flat import Retriever, ScoredHub, Search
from librarian.retrieval.rerank import needs_rerank, rerank_scores
from librarian.routing.router import Router
from librarian.schemas.envelopes import Candidate, Envelope, Link, Retrieval
from librarian.schemas.records import Section


class ExplicitStage:
    """C.2: sections citing a CRE are decided without a model (with C.8's guard); the
    rest go on to the models."""

    name = "explicit"
    audited = False  # a model-scored row never went through it

    def __init__(self, hub: Hub, safety: SafetyGuard) -> None:
        self.hub, self.safety = hub, safety
        self.component = Component("explicit", ids.EXPLICIT, note="no model")

    def components(self, priors_read: bool) -> list[Component]:
        return [self.component]

    def find(self, section: Section) -> ExplicitReference | None:
        return find_references(f"{section.title_hint or ''}\n{section.text}", self.hub.by_id)

    def run(self, batch: Prepared) -> None:
        for pos, section in enumerate(batch.sections):
            ref = self.find(section)
            if ref is None:
                batch.to_model.append((pos, section))
            else:
                batch.explicit[pos] = self.decided(section, ref, batch.ctx, batch.priors)

    def decided(
        self, section: Section, ref: ExplicitReference, ctx: RunContext, priors: Priors | None
    ) -> Envelope:
        """One known id, cited plainly, links; anything else goes to a person, flagged
        with what made it doubtful."""
        described = describe([self.component, self.safety.component(priors is not None)])
        retrieval = Retrieval(
            retriever=described, candidates=[], reranked=[], threshold=ctx.policy.alone_cut
        )
        plain = ref.is_single_known and not ref.doubtful
        first = ref.known[0] if ref.known else None
        prior = priors.get(section.span_key) if priors is not None else None
        verdict = self.safety.check(SafetyInput(section, first, None, prior, priors is not None))
        verdict = replace(verdict, flags=(*ref.flags(), *verdict.flags))
        if plain and first is not None:
            why_ = f"the text cites CRE {first} ({self.hub.by_id[first].name})"
            links = [Link(cre_id=first, link_type="LinkedTo", confidence=1.0, rationale=why_)]
        else:
            why_ = "cited in the text; " + ", ".join(ref.doubts())
            links = [
                Link(cre_id=c, link_type="LinkedTo", confidence=0.0, rationale=why_)
                for c in ref.known
            ]
        score = 1.0 if plain else 0.0
        decision = decide(
            score, list(ref.known), verdict.flags, ctx.policy.alone_cut, verdict.update_conflict
        )
        return envelope(section, decision, Emitted(retrieval, links, verdict.detection()), ctx)


class EmbedStage:
    """C.3: each model row's query text to a vector."""

    name = "embed"
    audited = True

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        # One batch encoded at a time in a process: the encoder's own threads already use
        # every core, and the flow's thread pool prepares the next batch while the runner
        # takes the last; two encodes at once oversubscribed the cores and ran each at
        # half speed (docs/benchmarks.md). The rest of a batch's work still overlaps.
        self._encoding = threading.Lock()

    @property
    def component(self) -> Component:
        settings = {"fingerprint": self.embedder.fingerprint[:16]}
        return Component("embed", ids.EMBED, uses=self.embedder.name, settings=settings)

    def components(self, priors_read: bool) -> list[Component]:
        return [self.component]

    def run(self, batch: Prepared) -> None:
        if batch.to_model:
            batch.embedded = self.embed([s for _, s in batch.to_model])

    def embed(self, sections: Sequence[Section]) -> Embedded:
        queries = [query_text(s) for s in sections]
        cut = tuple(self.embedder.truncated(queries))  # summary.md names them
        with self._encoding:
            vectors = self.embedder.encode(queries)
        return Embedded(queries, vectors, len(cut), cut)


class RetrieveStage:
    """C.4: route each section to the collections it may search, then search them: dense
    scores plus `EVIDENCE_WEIGHT` x the best linked-section cosine, top k."""

    name = "retrieve"
    audited = True

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

    def components(self, priors_read: bool) -> list[Component]:
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
        return [route, retrieve]

    def run(self, batch: Prepared) -> None:
        if batch.to_model:
            sections = [s for _, s in batch.to_model]
            batch.retrieved = self.search(sections, batch.embedded.vectors)

    def search(
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
    """C.6: the cross-encoder's scores of a row's hits, where one is configured (and,
    with a gap, where the first two hits are closer than it)."""

    name = "rerank"
    audited = True

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

    def components(self, priors_read: bool) -> list[Component]:
        return [self.component]

    def run(self, batch: Completing) -> None:
        scores = self.scores([r.query for r in batch.rows], [r.linked.hits for r in batch.rows])
        for row, rerank in zip(batch.rows, scores, strict=True):
            row.rerank = rerank

    def scores(self, queries: list[str], hits: list[list[ScoredHub]]) -> list[list[float] | None]:
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
