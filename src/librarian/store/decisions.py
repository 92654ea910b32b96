"""Reading and writing decisions: idempotent by (chunk, text), spans found for updates."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, func, or_, select, tuple_, update
from sqlalchemy.exc import InterfaceError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session

from librarian.schemas.envelopes import (
    SOURCE_AUDIT,
    UNMAPPABLE_AUDIT,
    Envelope,
    LinkProposal,
    ReviewItem,
    dump_envelope,
    review_reason,
)
from librarian.schemas.records import (
    BatchResult,
    DecisionFacts,
    PriorDecision,
    RejectCode,
    Rejection,
    Section,
    Skip,
    SkipCode,
)
from librarian.schemas.routing import RoutingDecision
from librarian.sql import StoreError, reason
from librarian.store.queue import record_failure, stamp_consumed, still_open
from librarian.store.tables import DecisionRow, HumanDecisionRow, RejectedRow, ReviewAliasRow
from librarian.text import content_hash

LINKED = "linked"
REVIEW_REQUIRED = "review_required"
WITHDRAWN = "withdrawn"  # an open item whose section left its document (store/versions.py)
# An open item whose section's text changed: the update's item replaces it (`supersede`).
SUPERSEDED = "superseded"


@dataclass
class WriteResult:
    decisions: int = 0
    rejections: int = 0
    already_there: int = 0  # written by a concurrent run between our read and our write
    # Lines (queue ids) the database refused, or that errored while processed, with why:
    # from a file they are stored as rejections; from the queue they are left for a later
    # run, their attempts counted, and dead-lettered after the last one.
    failed: dict[int, str] = field(default_factory=dict)
    dead_lettered: int = 0
    redecided: int = 0  # open items decided by other models, decided again
    # Open items a person decided (or newer models re-decided) between our read and our
    # write: left as they are, never overwritten.
    lost_to_review: int = 0
    superseded: int = 0  # open items of an older text, closed by their update's

    def add(self, other: WriteResult) -> None:
        self.superseded += other.superseded
        self.redecided += other.redecided
        self.lost_to_review += other.lost_to_review
        self.decisions += other.decisions
        self.rejections += other.rejections
        self.already_there += other.already_there
        self.failed.update(other.failed)
        self.dead_lettered += other.dead_lettered


def commit(session: Session, batch: StoredBatch) -> WriteResult:
    """Store a batch in one transaction (consuming its queue rows); when the database
    refuses the batch's data, row by row, so that only the offending rows fail.

    A database that cannot write at all (locked, disk full, connection gone) fails the
    run instead: no row is to blame, so none has an attempt counted against it."""
    outcome = _committed(session, lambda: _write_and_stamp(session, batch))
    if isinstance(outcome, WriteResult):
        return outcome
    engine = session.get_bind()
    result = WriteResult()
    for line in batch.lines:
        result.add(_commit_one(engine, batch.one(line), line))
    return result


def _committed(session: Session, work: Callable[[], WriteResult]) -> WriteResult | str:
    """`work()` committed, or why the database refused its data (rolled back); an outage
    raises StoreError."""
    try:
        result = work()
        session.commit()
        return result
    except (OperationalError, InterfaceError) as exc:
        session.rollback()
        raise StoreError(f"the database refused the batch: {reason(exc)}") from exc
    except (SQLAlchemyError, ValueError) as exc:
        session.rollback()
        return reason(exc) if isinstance(exc, SQLAlchemyError) else str(exc)


def _write_and_stamp(session: Session, batch: StoredBatch) -> WriteResult:
    result = write(session, batch)
    result.dead_lettered = _fail_queue_rows(session, batch.failures)
    result.failed.update(batch.failures)
    stamp_consumed(session, [i for i in batch.claimed_ids if i not in batch.failures])
    return result


def _fail_queue_rows(session: Session, failures: Mapping[int, str]) -> int:
    return sum(record_failure(session, queue_id, why) for queue_id, why in failures.items())


def _commit_one(engine: Engine | Connection, one: StoredBatch, line: int) -> WriteResult:
    """One line in its own transaction; a refused one fails alone."""

    def work() -> WriteResult:
        if one.from_queue and not still_open(session, line):
            return WriteResult()  # another consumer took it after our batch was refused
        result = write(session, one)
        stamp_consumed(session, one.claimed_ids)
        return result

    with Session(engine) as session:
        outcome = _committed(session, work)
    if isinstance(outcome, WriteResult):
        return outcome
    return _record_refusal(engine, one, line, f"the database refused it: {outcome}")


def _record_refusal(
    engine: Engine | Connection, one: StoredBatch, line: int, why: str
) -> WriteResult:
    result = WriteResult(failed={line: why})
    with Session(engine) as session:
        try:
            if one.from_queue:
                result.dead_lettered = _fail_queue_rows(session, {line: why})
            else:
                refusal = Rejection(
                    line=line,
                    reason=RejectCode.PROCESSING_ERROR,
                    message=f"line {line}: {why}"[:2000],
                )
                result.rejections = _add_rejection(session, one, refusal, datetime.now(UTC))
            session.commit()
        except (SQLAlchemyError, ValueError):
            session.rollback()  # even the refusal cannot be kept: it is in the run's files
    return result


def unchanged(
    session: Session, sections: Sequence[Section], models_digest: str | None = None
) -> list[Skip]:
    """Sections already decided with the same text (same chunk, or same span): no work.
    An item still open that other models decided (`models_digest` differs) is not: the
    run decides it again, and the store replaces the open item."""
    if not sections:
        return []
    chunk_keys = {(s.chunk_id, s.content_hash) for s in sections}
    span_keys = {(s.span_key, s.content_hash) for s in sections}
    rows = session.execute(
        select(
            DecisionRow.chunk_id,
            DecisionRow.span_key,
            DecisionRow.content_hash,
            DecisionRow.pipeline_run_id,
            DecisionRow.status,
            DecisionRow.consumed_at,
            DecisionRow.models_digest,
            DecisionRow.source_key,
            DecisionRow.created_at,
        ).where(
            or_(
                tuple_(DecisionRow.chunk_id, DecisionRow.content_hash).in_(chunk_keys),
                tuple_(DecisionRow.span_key, DecisionRow.content_hash).in_(span_keys),
            )
        )
    ).all()
    latest = last_reviewed(session, {s.source_key for s in sections})
    rows = [r for r in rows if not _decided_by_others(r, models_digest, latest)]
    by_chunk = {(r.chunk_id, r.content_hash): r.pipeline_run_id for r in rows}
    by_span = {(r.span_key, r.content_hash): r.pipeline_run_id for r in rows}
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


@dataclass
class StoredBatch:
    """What one batch puts in the database. From the queue table, `claimed_ids` are
    stamped consumed with it and `failures` (queue id -> error: rows that errored while
    processed) are left for a later run, their attempts counted."""

    run_id: str
    envelopes: list[Envelope]
    sections: dict[str, Section]
    source: str
    rejections: list[Rejection] = field(default_factory=list)
    raw_lines: dict[int, bytes] = field(default_factory=dict)
    claimed_ids: list[int] = field(default_factory=list)
    routing: list[RoutingDecision] = field(default_factory=list)
    failures: dict[int, str] = field(default_factory=dict)
    models_digest: str | None = None  # of the models that decided the batch
    candidates: dict[str, dict[str, Any]] = field(default_factory=dict)  # by chunk id
    relink_open: bool = False  # `relink`: every open item of the batch is decided again
    facts: dict[str, DecisionFacts] = field(default_factory=dict)  # by chunk id

    @classmethod
    def linked(
        cls, run_id: str, result: BatchResult, sections: Iterable[Section], source: str
    ) -> StoredBatch:
        """What linking `sections` made of them, whole: their envelopes with the routing,
        candidates and facts the store keeps beside them."""
        by_chunk = {s.chunk_id: s for s in sections}
        return cls(
            run_id=run_id,
            envelopes=result.envelopes,
            sections=by_chunk,
            source=source,
            routing=result.routing,
            candidates=result.candidates,
            facts=result.facts,
        )

    @property
    def from_queue(self) -> bool:
        return bool(self.claimed_ids)

    def one(self, line: int) -> StoredBatch:
        """The part of this batch that is input line (or queue row) `line`."""
        chunks = {c for c, s in self.sections.items() if s.line == line}
        return replace(
            self,
            envelopes=[e for e in self.envelopes if e.chunk_id in chunks],
            sections={c: self.sections[c] for c in chunks},
            rejections=[r for r in self.rejections if r.line == line],
            claimed_ids=[i for i in self.claimed_ids if i == line],
            routing=[d for d in self.routing if d.chunk_id in chunks],
            candidates={c: v for c, v in self.candidates.items() if c in chunks},
            facts={c: v for c, v in self.facts.items() if c in chunks},
            failures={},
        )

    @property
    def lines(self) -> list[int]:
        found = {s.line for s in self.sections.values()} | {r.line for r in self.rejections}
        return sorted(found | set(self.claimed_ids))


def write(session: Session, batch: StoredBatch) -> WriteResult:
    """Add one batch's decisions and rejections to the session (the caller commits)."""
    queue_ids = {c: s.line for c, s in batch.sections.items()} if batch.from_queue else None
    routed = {d.chunk_id: d.model_dump(mode="json") for d in batch.routing}
    now = datetime.now(UTC)
    result = WriteResult()
    present = _present(session, batch)
    decided: list[Envelope] = []
    for envelope in batch.envelopes:
        section = batch.sections[envelope.chunk_id]
        key = (envelope.chunk_id, section.content_hash)
        if key in present and present[key] is None:
            result.already_there += 1
            continue
        facts = batch.facts.get(envelope.chunk_id, DecisionFacts())
        row = _decision_row(envelope, section, batch.run_id, now, queue_ids, facts)
        row.routing = routed.get(envelope.chunk_id)
        row.candidates = batch.candidates.get(envelope.chunk_id)
        row.models_digest = batch.models_digest
        if (stale := present.get(key)) is not None:
            if not _replace(session, stale, row):
                result.lost_to_review += 1
                continue
            result.redecided += 1
        else:
            session.add(row)
        result.decisions += 1
        decided.append(envelope)
    result.superseded = supersede(session, batch, decided, now)
    for rejection in batch.rejections:
        result.rejections += _add_rejection(session, batch, rejection, now)
    return result


# An item no one decided: open, or closed as withdrawn (it would reopen were its section
# back in its document).
_UNDECIDED = (
    DecisionRow.status.in_((REVIEW_REQUIRED, WITHDRAWN)),
    DecisionRow.consumed_at.is_(None),
)


def supersede(
    session: Session, batch: StoredBatch, decided: Sequence[Envelope], now: datetime
) -> int:
    """Each decided section's open items of an older text (same chunk, or the span its
    update detection names as its prior), from earlier runs, closed as superseded: a
    section never has two open items, one on text its document no longer holds. A
    compare-and-set on each: an item a reviewer decided meanwhile keeps its decision.
    Returns how many were closed."""
    if not decided:
        return 0
    sections = [batch.sections[e.chunk_id] for e in decided]
    found = session.execute(
        select(
            DecisionRow.id, DecisionRow.chunk_id, DecisionRow.span_key, DecisionRow.content_hash
        ).where(
            or_(
                DecisionRow.chunk_id.in_({s.chunk_id for s in sections}),
                DecisionRow.span_key.in_({s.span_key for s in sections}),
            ),
            *_UNDECIDED,
            DecisionRow.pipeline_run_id != batch.run_id,
        )
    ).all()
    older = {
        row_id
        for envelope, section in zip(decided, sections, strict=True)
        for row_id, chunk, span, text in found
        if text != section.content_hash
        and (
            chunk == section.chunk_id
            or (span == section.span_key and chunk == envelope.update_detection.prior_chunk_id)
        )
    }
    closed = 0
    for row_id in sorted(older):
        done = session.execute(
            update(DecisionRow)
            .where(DecisionRow.id == row_id, *_UNDECIDED)
            .values(status=SUPERSEDED, withdrawn_at=func.coalesce(DecisionRow.withdrawn_at, now))
            .execution_options(synchronize_session=False)
        )
        closed += int(done.rowcount == 1)  # type: ignore[attr-defined]
    return closed


def _decided_by_others(
    row: Any,
    models_digest: str | None,
    latest: Mapping[str, datetime] | None = None,
    relink: bool = False,
) -> bool:
    """An open review item to decide again (`models_digest` None: not asked): other
    models decided it, or its source's reviewers have decided since (its cut may have
    moved: what they certify reaches the items still open), or `relink` asks for it."""
    if models_digest is None or row.status != REVIEW_REQUIRED or row.consumed_at is not None:
        return False
    if relink or row.models_digest != models_digest:
        return True
    reviewed = (latest or {}).get(row.source_key)
    return reviewed is not None and reviewed > _aware(row.created_at)


def last_reviewed(session: Session, sources: Iterable[str | None]) -> dict[str, datetime]:
    """When each source's reviewers last decided (a decision standing)."""
    keys = [k for k in set(sources) if k]
    if not keys:
        return {}
    rows = session.execute(
        select(DecisionRow.source_key, func.max(HumanDecisionRow.decided_at))
        .join(HumanDecisionRow, HumanDecisionRow.decision_row_id == DecisionRow.id)
        .where(DecisionRow.source_key.in_(keys), HumanDecisionRow.standing())
        .group_by(DecisionRow.source_key)
    ).all()
    return {str(key): _aware(at) for key, at in rows if key and at}


def _aware(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes (stored as UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _present(session: Session, batch: StoredBatch) -> dict[tuple[str, str], DecisionRow | None]:
    """The batch's chunks the store holds already: None, or the open row decided by other
    models that this batch's decision replaces."""
    keys = [(e.chunk_id, batch.sections[e.chunk_id].content_hash) for e in batch.envelopes]
    if not keys:
        return {}
    query = select(DecisionRow).where(
        tuple_(DecisionRow.chunk_id, DecisionRow.content_hash).in_(keys)
    )
    latest = last_reviewed(session, {s.source_key for s in batch.sections.values()})
    return {
        (row.chunk_id, row.content_hash): row
        if _decided_by_others(row, batch.models_digest, latest, batch.relink_open)
        else None
        for row in session.execute(query).scalars()
    }


_REDECIDED = (
    "pipeline_run_id",
    "status",
    "top_cre_id",
    "confidence",
    "reason_code",
    "is_update",
    "prior_chunk_id",
    "review_id",
    "envelope",
    "routing",
    "candidates",
    "created_at",
    "models_digest",
    "source_key",
    "heading_path",
)


def _replace(session: Session, stale: DecisionRow, fresh: DecisionRow) -> bool:
    """An open item decided again by newer models: its row takes the new decision (the
    row, its id and any undone decisions on it stay). One conditional UPDATE: only while
    the row is still the open item we read (same review id, not consumed), so a reviewer
    who decided it meanwhile keeps their decision. False: the row was not ours to change."""
    old_id, row_id = stale.review_id, stale.id
    changed = session.execute(
        update(DecisionRow)
        .where(
            DecisionRow.id == stale.id,
            DecisionRow.status == REVIEW_REQUIRED,
            DecisionRow.consumed_at.is_(None),
            DecisionRow.review_id == stale.review_id,
        )
        .values({name: getattr(fresh, name) for name in _REDECIDED})
        .execution_options(synchronize_session=False)
    )
    session.expire(stale)
    if changed.rowcount == 1 and old_id and old_id != fresh.review_id:  # type: ignore[attr-defined]
        # The item's old address still leads to it (`store.human.open_row`, the workbench).
        alias = ReviewAliasRow(
            review_id=old_id, decision_row_id=row_id, created_at=datetime.now(UTC)
        )
        session.merge(alias)
    return bool(changed.rowcount == 1)  # type: ignore[attr-defined]


def _add_rejection(
    session: Session, batch: StoredBatch, rejection: Rejection, now: datetime
) -> int:
    raw = batch.raw_lines.get(rejection.line, b"")
    return add_rejection(session, batch.run_id, batch.source, rejection, raw, now)


def add_rejection(
    session: Session, run_id: str, source: str, rejection: Rejection, raw: bytes, now: datetime
) -> int:
    """Keep a refused line with its reason (once: the same line of the same source, with
    the same bytes, is not added again). Returns how many were added."""
    digest = hashlib.sha256(raw).hexdigest()
    exists = session.execute(
        select(RejectedRow.id).where(
            RejectedRow.source == source,
            RejectedRow.line == rejection.line,
            RejectedRow.raw_sha256 == digest,
        )
    ).first()
    if exists:
        return 0
    session.add(
        RejectedRow(
            run_id=run_id,
            source=source[:1024],
            line=rejection.line,
            chunk_id=(storable(rejection.chunk_id) or "")[:512] or None,
            reason=str(rejection.reason),
            field=(storable(rejection.field) or "")[:128] or None,
            message=storable(rejection.message) or "",
            raw=storable(raw.decode("utf-8", errors="backslashreplace")) or "",
            raw_sha256=digest,
            created_at=now,
        )
    )
    return 1


def storable(text: str | None) -> str | None:
    """Text any database keeps: a NUL (which PostgreSQL refuses) or an unpaired surrogate
    (which no UTF-8 column holds) written out as an escape."""
    if text is None:
        return None
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def _decision_row(
    envelope: Envelope,
    section: Section,
    run_id: str,
    now: datetime,
    queue_ids: Mapping[str, int] | None,
    facts: DecisionFacts,
) -> DecisionRow:
    top: str | None = None
    confidence: float | None = None
    reason: str | None = None
    review: str | None = None
    if isinstance(envelope, LinkProposal):
        status, top, confidence = LINKED, envelope.links[0].cre_id, envelope.links[0].confidence
    else:
        reason, review = review_reason(envelope, facts.unmappable), envelope.review_id
        status = REVIEW_REQUIRED
        if envelope.suggested_links:
            top = envelope.suggested_links[0].cre_id
            confidence = envelope.suggested_links[0].confidence
    return DecisionRow(
        chunk_id=envelope.chunk_id,
        content_hash=section.content_hash,
        artifact_id=envelope.artifact_id,
        span_key=section.span_key,
        source_key=section.source_key,
        pipeline_run_id=run_id,
        schema_version=envelope.schema_version,
        source_label=section.source_label,
        status=status,
        top_cre_id=top,
        confidence=confidence,
        reason_code=reason,
        is_update=envelope.update_detection.is_update,
        prior_chunk_id=envelope.update_detection.prior_chunk_id,
        review_id=review,
        queue_row_id=(queue_ids or {}).get(envelope.chunk_id),
        text=section.text,
        heading_path=list(section.heading_path) or None,
        envelope=dump_envelope(envelope),
        created_at=now,
        source_linked=facts.linked_as,
    )


def load_reviews(session: Session, reviews: Sequence[ReviewItem], source: str) -> int:
    """A dry run's ReviewItems into the store, so the workbench can serve them; items
    already there are left as they are. Returns how many were added."""
    added = 0
    for run_id in sorted({r.pipeline_run_id for r in reviews}):
        batch = [r for r in reviews if r.pipeline_run_id == run_id]
        sections = {r.chunk_id: section_of(r) for r in batch}
        facts = {r.chunk_id: read_back(r) for r in batch}
        stored = StoredBatch(
            run_id=run_id, envelopes=list(batch), sections=sections, source=source, facts=facts
        )
        added += write(session, stored).decisions
    return added


def read_back(envelope: Envelope) -> DecisionFacts:
    """The facts of an envelope read back from a dry run's file, which holds the RFC
    envelope alone: its audit text is all there is to read them from."""
    retriever = envelope.retrieval.retriever
    part = next((p for p in retriever.split("; ") if p.startswith(SOURCE_AUDIT)), None)
    linked_as = part[len(SOURCE_AUDIT) :] if part else None
    return DecisionFacts(linked_as, UNMAPPABLE_AUDIT in retriever)


def section_of(envelope: ReviewItem) -> Section:
    """The section an envelope was decided from, as far as the envelope tells it."""
    knowledge = envelope.knowledge
    return Section(
        line=1,
        chunk_id=envelope.chunk_id,
        artifact_id=envelope.artifact_id,
        input_shape="knowledge_item",
        text=knowledge.text,
        source=knowledge.source,
        locator=knowledge.locator,
        title_hint=knowledge.locator.title,
        content_hash=content_hash(knowledge.text),
    )
