"""Stage 5: turn scored candidates (or an explicit citation) into an envelope."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from librarian.catalogue.hub import Hub
from librarian.pipeline.explicit import ExplicitReference
from librarian.pipeline.negation import negation_differs
from librarian.schemas.envelopes import (
    AdversarialFlag,
    Candidate,
    Envelope,
    Knowledge,
    Link,
    LinkProposal,
    ReasonCode,
    Retrieval,
    ReviewItem,
    UpdateDetection,
)
from librarian.schemas.records import Section

EXPLICIT_RETRIEVER = "explicit-cre-reference (no model)"


@dataclass(frozen=True)
class RunContext:
    run_id: str
    threshold: float
    now: datetime


def knowledge_of(section: Section) -> Knowledge:
    return Knowledge(
        text=section.text,
        source=section.source,
        locator=section.locator,
        security_summary=section.security_summary,
    )


def review_id(run_id: str, chunk_id: str) -> str:
    return "rev-" + hashlib.sha256(f"{run_id}\x00{chunk_id}".encode()).hexdigest()[:20]


def raw_confidence(candidate: Candidate) -> float:
    """Without a calibrator: the reranker's score when it ran, else the cosine, in [0, 1]."""
    raw = candidate.score_rerank if candidate.score_rerank is not None else candidate.score_vector
    return min(1.0, max(0.0, raw))


@dataclass(frozen=True)
class Scored:
    """What the models made of one section: candidates in retrieval order, the reranked
    ones (if a reranker ran), a calibrated confidence and the evidence in words, by CRE."""

    candidates: list[Candidate]
    reranked: list[Candidate]
    confidence: Mapping[str, float] | None = None  # None: raw scores stand in
    reasons: Mapping[str, str] = field(default_factory=dict)

    def confidence_of(self, candidate: Candidate) -> float:
        if self.confidence is None:
            return raw_confidence(candidate)
        return min(1.0, max(0.0, self.confidence[candidate.cre_id]))


def decide(
    section: Section, scored: Scored, retriever: str, top_n: int, ctx: RunContext
) -> Envelope:
    """Link the first-ranked candidate when its confidence reaches the threshold, unless a
    flag is raised: a section whose negation differs from its best hub's name goes to a
    person as ADVERSARIAL_FLAG / NEGATION_MISMATCH, whatever its confidence."""
    retrieval = Retrieval(retriever=retriever, candidates=scored.candidates,
                          reranked=scored.reranked, threshold=ctx.threshold)  # fmt: skip
    ranked = scored.reranked or scored.candidates
    if not ranked:
        return _review(section, retrieval, ReasonCode.NO_CANDIDATES, None, ctx)
    best = ranked[0]
    suggestions = [_suggestion(c, scored) for c in ranked[:top_n]]
    if negation_differs(section.text, best.cre_name):
        flags = UpdateDetection(adversarial_flags=[AdversarialFlag.NEGATION_MISMATCH])
        return _review(section, retrieval, ReasonCode.ADVERSARIAL_FLAG, suggestions, ctx, flags)
    confidence = scored.confidence_of(best)
    if confidence < ctx.threshold:
        return _review(section, retrieval, ReasonCode.BELOW_THRESHOLD, suggestions, ctx)
    why = f"top candidate '{best.cre_name}' at {confidence:.3f} >= {ctx.threshold:.3f}"
    if best.cre_id in scored.reasons:
        why += f"; {scored.reasons[best.cre_id]}"
    link = Link(cre_id=best.cre_id, link_type="AutomaticallyLinkedTo", confidence=confidence,
                rationale=why)  # fmt: skip
    return _proposal(section, retrieval, link, ctx)


def _suggestion(candidate: Candidate, scored: Scored) -> Link:
    return Link(
        cre_id=candidate.cre_id,
        link_type="AutomaticallyLinkedTo",
        confidence=scored.confidence_of(candidate),
        rationale=scored.reasons.get(candidate.cre_id),
    )


def decide_explicit(
    section: Section, ref: ExplicitReference, hub: Hub, ctx: RunContext
) -> Envelope:
    """A cited CRE id decides without any model: one known id, cited plainly, links;
    anything else goes to a person, flagged with what made it doubtful."""
    retrieval = Retrieval(
        retriever=EXPLICIT_RETRIEVER, candidates=[], reranked=[], threshold=ctx.threshold
    )
    if ref.is_single_known and not ref.doubtful:
        cre_id = ref.known[0]
        why = f"the text cites CRE {cre_id} ({hub.by_id[cre_id].name})"
        link = Link(cre_id=cre_id, link_type="LinkedTo", confidence=1.0, rationale=why)
        return _proposal(section, retrieval, link, ctx)
    why = "cited in the text; " + ", ".join(_doubts(ref))
    suggestions = [
        Link(cre_id=cre_id, link_type="LinkedTo", confidence=0.0, rationale=why)
        for cre_id in ref.known
    ]
    flags = UpdateDetection(adversarial_flags=_flags(ref))
    return _review(section, retrieval, ReasonCode.ADVERSARIAL_FLAG, suggestions or None, ctx,
                   flags)  # fmt: skip


def _flags(ref: ExplicitReference) -> list[AdversarialFlag]:
    flags: list[AdversarialFlag] = []
    if ref.unknown:
        flags.append(AdversarialFlag.UNKNOWN_CRE_REFERENCE)
    if len(ref.known) + len(ref.unknown) > 1:
        flags.append(AdversarialFlag.CONFLICTING_CRE_REFERENCES)
    if ref.negated:
        flags.append(AdversarialFlag.NEGATED_CRE_REFERENCE)
    if ref.hidden:
        flags.append(AdversarialFlag.HIDDEN_CHARACTERS)
    return flags


def _doubts(ref: ExplicitReference) -> list[str]:
    doubts = []
    if len(ref.known) + len(ref.unknown) > 1:
        doubts.append("alongside other references")
    if ref.unknown:
        doubts.append(f"with ids the hub does not know ({', '.join(ref.unknown)})")
    if ref.negated:
        doubts.append("in a negated sentence")
    if ref.hidden:
        doubts.append(f"with hidden characters {' '.join(ref.hidden)}")
    return doubts


def _proposal(section: Section, retrieval: Retrieval, link: Link, ctx: RunContext) -> LinkProposal:
    return LinkProposal(
        chunk_id=section.chunk_id,
        artifact_id=section.artifact_id,
        pipeline_run_id=ctx.run_id,
        classified_at=ctx.now,
        knowledge=knowledge_of(section),
        retrieval=retrieval,
        links=[link],
    )


def _review(
    section: Section,
    retrieval: Retrieval,
    reason: ReasonCode,
    suggestions: list[Link] | None,
    ctx: RunContext,
    update: UpdateDetection | None = None,
) -> ReviewItem:
    origin = Origin(ctx.run_id, section.chunk_id, section.artifact_id, ctx.now)
    knowledge = knowledge_of(section)
    return review_item(
        origin, reason, knowledge, retrieval, suggestions, update or UpdateDetection()
    )


class Origin(NamedTuple):
    """Which section a review item speaks for, from which run, since when."""

    run_id: str
    chunk_id: str
    artifact_id: str
    created_at: datetime


def review_item(
    origin: Origin,
    reason: ReasonCode,
    knowledge: Knowledge,
    retrieval: Retrieval,
    suggestions: list[Link] | None,
    update: UpdateDetection,
) -> ReviewItem:
    """The one place a ReviewItem is built (from a section here, from a proposal in
    `update`), so its review id is always derived the same way."""
    run_id, chunk_id, artifact_id, created_at = origin
    return ReviewItem(
        review_id=review_id(run_id, chunk_id),
        chunk_id=chunk_id,
        artifact_id=artifact_id,
        pipeline_run_id=run_id,
        created_at=created_at,
        reason_code=reason,
        knowledge=knowledge,
        retrieval=retrieval,
        suggested_links=suggestions,
        update_detection=update,
    )
