"""Reading and writing decisions: idempotent by (chunk, text), spans found for updates."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import or_, select, tuple_
from sqlalchemy.orm import Session

from librarian.contracts.envelopes import Envelope, LinkProposal, dump_envelope
from librarian.contracts.records import Rejection, Section, Skip, SkipCode
from librarian.contracts.routing import RoutingDecision
from librarian.stages.update import PriorDecision
from librarian.store.tables import DecisionRow, RejectedRow

LINKED = "linked"
REVIEW_REQUIRED = "review_required"
REVIEWED = "reviewed"


@dataclass
class WriteResult:
    decisions: int = 0
    rejections: int = 0
    already_there: int = 0  # written by a concurrent run between our read and our write


def unchanged(session: Session, sections: Sequence[Section]) -> list[Skip]:
    """Sections already decided with the same text (same chunk, or same span): no work."""
    if not sections:
        return []
    chunk_keys = {(s.chunk_id, s.content_hash) for s in sections}
    span_keys = {(s.span_key, s.content_hash) for s in sections}
    rows = session.execute(
        select(
            DecisionRow.chunk_id, DecisionRow.span_key, DecisionRow.content_hash, DecisionRow.run_id
        ).where(
            or_(
                tuple_(DecisionRow.chunk_id, DecisionRow.content_hash).in_(chunk_keys),
                tuple_(DecisionRow.span_key, DecisionRow.content_hash).in_(span_keys),
            )
        )
    ).all()
    by_chunk = {(r.chunk_id, r.content_hash): r.run_id for r in rows}
    by_span = {(r.span_key, r.content_hash): r.run_id for r in rows}
    out: list[Skip] = []
    for s in sections:
        run = by_chunk.get((s.chunk_id, s.content_hash)) or by_span.get(
            (s.span_key, s.content_hash)
        )
        if run is not None:
            why = f"already decided with the same text (run {run}); nothing written"
            out.append(
                Skip(line=s.line, chunk_id=s.chunk_id, reason=SkipCode.UNCHANGED, message=why)
            )
    return out


def priors(session: Session, sections: Iterable[Section]) -> dict[str, PriorDecision]:
    """The latest decision for each section's span whose text differs from the section's."""
    wanted = {s.span_key: s.content_hash for s in sections}
    if not wanted:
        return {}
    rows = session.execute(
        select(DecisionRow)
        .where(DecisionRow.span_key.in_(list(wanted)))
        .order_by(DecisionRow.span_key, DecisionRow.id)
    ).scalars()
    found: dict[str, PriorDecision] = {}
    for row in rows:
        if row.content_hash == wanted[row.span_key]:
            continue
        linked = row.top_cre_id if row.status == LINKED else None
        found[row.span_key] = PriorDecision(row.chunk_id, row.text, linked)  # latest wins
    return found


def write(
    session: Session,
    run_id: str,
    envelopes: Sequence[Envelope],
    sections: Mapping[str, Section],
    rejections: Sequence[Rejection],
    raw_lines: Mapping[int, bytes],
    source: str,
    queue_ids: Mapping[str, int] | None = None,
    routing: Sequence[RoutingDecision] = (),
) -> WriteResult:
    """Add one batch's decisions and rejections to the session (the caller commits)."""
    routed = {d.chunk_id: d.model_dump(mode="json") for d in routing}
    now = datetime.now(UTC)
    result = WriteResult()
    keys = [(e.chunk_id, sections[e.chunk_id].content_hash) for e in envelopes]
    present = set(
        session.execute(
            select(DecisionRow.chunk_id, DecisionRow.content_hash).where(
                tuple_(DecisionRow.chunk_id, DecisionRow.content_hash).in_(keys)
            )
        ).tuples()
    ) if keys else set()  # fmt: skip
    for envelope in envelopes:
        section = sections[envelope.chunk_id]
        if (envelope.chunk_id, section.content_hash) in present:
            result.already_there += 1
            continue
        row = _decision_row(envelope, section, run_id, now, queue_ids)
        row.routing = routed.get(envelope.chunk_id)
        session.add(row)
        result.decisions += 1
    for rejection in rejections:
        raw = raw_lines.get(rejection.line, b"")
        digest = hashlib.sha256(raw).hexdigest()
        exists = session.execute(
            select(RejectedRow.id).where(
                RejectedRow.source == source,
                RejectedRow.line == rejection.line,
                RejectedRow.raw_sha256 == digest,
            )
        ).first()
        if exists:
            continue
        session.add(
            RejectedRow(
                run_id=run_id,
                source=source,
                line=rejection.line,
                chunk_id=rejection.chunk_id,
                reason=str(rejection.reason),
                field=rejection.field,
                message=rejection.message,
                raw=raw.decode("utf-8", errors="backslashreplace"),
                raw_sha256=digest,
                created_at=now,
            )
        )
        result.rejections += 1
    return result


def _decision_row(
    envelope: Envelope,
    section: Section,
    run_id: str,
    now: datetime,
    queue_ids: Mapping[str, int] | None,
) -> DecisionRow:
    top: str | None = None
    confidence: float | None = None
    reason: str | None = None
    review: str | None = None
    if isinstance(envelope, LinkProposal):
        status, top, confidence = LINKED, envelope.links[0].cre_id, envelope.links[0].confidence
    else:
        status, reason, review = REVIEW_REQUIRED, str(envelope.reason_code), envelope.review_id
        if envelope.suggested_links:
            top = envelope.suggested_links[0].cre_id
            confidence = envelope.suggested_links[0].confidence
    return DecisionRow(
        chunk_id=envelope.chunk_id,
        content_hash=section.content_hash,
        artifact_id=envelope.artifact_id,
        span_key=section.span_key,
        run_id=run_id,
        status=status,
        top_cre_id=top,
        confidence=confidence,
        reason_code=reason,
        is_update=envelope.update_detection.is_update,
        prior_chunk_id=envelope.update_detection.prior_chunk_id,
        review_id=review,
        queue_row_id=(queue_ids or {}).get(envelope.chunk_id),
        text=section.text,
        envelope=dump_envelope(envelope),
        created_at=now,
    )
