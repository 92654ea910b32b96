"""C.10 emit: a decision and what led to it, as an RFC LinkProposal or ReviewItem."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from librarian.policy.decision import DecisionPolicy
from librarian.policy.verdict import Decision
from librarian.schemas.envelopes import (
    Envelope,
    Knowledge,
    Link,
    LinkProposal,
    Retrieval,
    ReviewItem,
    UpdateDetection,
)
from librarian.schemas.records import Section


@dataclass(frozen=True)
class RunContext:
    run_id: str
    policy: DecisionPolicy
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


@dataclass(frozen=True)
class Emitted:
    """What an envelope says besides the decision: the retrieval audit, the ranked links
    (the first is the one linked), a rationale for the link, the update detection."""

    retrieval: Retrieval
    links: list[Link]
    update: UpdateDetection
    rationale: str | None = None


def envelope(section: Section, decision: Decision, emitted: Emitted, ctx: RunContext) -> Envelope:
    common: dict[str, Any] = {
        "chunk_id": section.chunk_id,
        "artifact_id": section.artifact_id,
        "pipeline_run_id": ctx.run_id,
        "knowledge": knowledge_of(section),
        "retrieval": emitted.retrieval,
        "update_detection": emitted.update,
    }
    if decision.linked:
        first = emitted.links[0]
        link = first.model_copy(update={"rationale": emitted.rationale or first.rationale})
        return LinkProposal(**common, classified_at=ctx.now, links=[link])
    assert decision.reason is not None
    return ReviewItem(
        **common,
        review_id=review_id(ctx.run_id, section.chunk_id),
        created_at=ctx.now,
        reason_code=decision.reason,
        suggested_links=emitted.links or None,
    )


def suggestion(cre_id: str, confidence: float, reasons: Mapping[str, str]) -> Link:
    return Link(
        cre_id=cre_id,
        link_type="AutomaticallyLinkedTo",
        confidence=confidence,
        rationale=reasons.get(cre_id),
    )
