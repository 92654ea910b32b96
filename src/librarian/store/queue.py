"""Draining the `knowledge_queue` table: claim a batch, decide it, stamp it, one transaction.

On PostgreSQL the claim is `FOR UPDATE SKIP LOCKED`: several consumers can drain one
queue and no row is decided twice. SQLite has no row locks; one consumer at a time.
A row's `consumed_at` is stamped in the transaction that stores its decision, never
before: a batch that fails is rolled back and read again by the next run.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import Engine, Select, func, select, update
from sqlalchemy.orm import Session

from librarian.errors import InputError
from librarian.sql import is_postgres
from librarian.store.tables import KnowledgeQueueRow, QueueAttempt

ACCEPTED_LABELS = ("KNOWLEDGE", "UNCERTAIN")
QUEUE_SOURCE = "knowledge_queue"
_COLUMNS = [c.name for c in KnowledgeQueueRow.__table__.columns if c.name != "consumed_at"]


@dataclass
class ClaimedBatch:
    """An open transaction holding (on PostgreSQL, locking) a batch of queue rows."""

    session: Session
    lines: list[tuple[int, bytes]] = field(default_factory=list)  # (queue id, row as JSON)

    @property
    def ids(self) -> list[int]:
        return [line for line, _ in self.lines]


# How often a row may error while processed before it is dead-lettered.
MAX_ATTEMPTS = 3


def _open_rows() -> Select[KnowledgeQueueRow]:
    """Unconsumed rows of our labels that are not dead letters."""
    dead = select(QueueAttempt.queue_row_id).where(QueueAttempt.dead_lettered_at.is_not(None))
    return select(KnowledgeQueueRow).where(
        KnowledgeQueueRow.consumed_at.is_(None),
        KnowledgeQueueRow.llm_label.in_(ACCEPTED_LABELS),
        KnowledgeQueueRow.id.not_in(dead),
    )


def claim(engine: Engine, limit: int, skip: Collection[int] = ()) -> ClaimedBatch:
    """Open a transaction and take up to `limit` open rows, oldest first; `skip`: rows
    that errored earlier in this run (left for a later one)."""
    session = Session(engine)
    query = _open_rows()
    if skip:
        query = query.where(KnowledgeQueueRow.id.not_in(sorted(skip)))
    query = query.order_by(KnowledgeQueueRow.created_at, KnowledgeQueueRow.id).limit(limit)
    if is_postgres(engine):
        query = query.with_for_update(skip_locked=True)
    try:
        rows = session.execute(query).scalars().all()
    except Exception:
        session.close()
        raise
    return ClaimedBatch(session, [(row.id, _as_json(row)) for row in rows])


def still_open(session: Session, queue_id: int) -> bool:
    """Take the row again, for a transaction of its own: False when another consumer has
    it (PostgreSQL: locked by them) or it was consumed since."""
    query = select(KnowledgeQueueRow.id).where(
        KnowledgeQueueRow.id == queue_id, KnowledgeQueueRow.consumed_at.is_(None)
    )
    if is_postgres(session.get_bind()):
        query = query.with_for_update(skip_locked=True)
    return session.execute(query).first() is not None


def stamp_consumed(session: Session, ids: Iterable[int]) -> None:
    wanted = list(ids)
    if wanted:
        session.execute(
            update(KnowledgeQueueRow)
            .where(KnowledgeQueueRow.id.in_(wanted))
            .values(consumed_at=datetime.now(UTC))
        )


def pending(engine: Engine) -> int:
    """Rows waiting to be decided (for a progress bar; other consumers may take some)."""
    with Session(engine) as session:
        count = session.execute(select(func.count()).select_from(_open_rows().subquery()))
        return int(count.scalar_one())


def record_failure(session: Session, queue_id: int, error: str) -> bool:
    """Count a failed attempt at a row (in the caller's transaction); True when this was
    the last allowed one and the row is now a dead letter."""
    now = datetime.now(UTC)
    attempt = session.get(QueueAttempt, queue_id)
    if attempt is None:
        attempt = QueueAttempt(queue_row_id=queue_id, attempts=0, last_error="", updated_at=now)
        session.add(attempt)
    attempt.attempts += 1
    attempt.last_error = error[:2000]
    attempt.updated_at = now
    if attempt.attempts >= MAX_ATTEMPTS:
        attempt.dead_lettered_at = now
    return attempt.dead_lettered_at is not None


def dead_letters(engine: Engine) -> list[QueueAttempt]:
    with Session(engine) as session:
        query = select(QueueAttempt).where(QueueAttempt.dead_lettered_at.is_not(None))
        return list(session.execute(query.order_by(QueueAttempt.queue_row_id)).scalars())


def _as_json(row: KnowledgeQueueRow) -> bytes:
    """The row as the queue-row JSON `ingest.parse_line` validates, like a file line."""
    values: dict[str, Any] = {}
    for name in _COLUMNS:
        value = getattr(row, name)
        if isinstance(value, datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)  # SQLite drops the zone; stored as UTC
        values[name] = value.isoformat() if isinstance(value, date) else value
    return json.dumps(values).encode("utf-8")


class QueueLoadError(InputError):
    """A line meant for the queue table is not a JSON object of queue-row columns."""


def enqueue(engine: Engine, rows: Iterable[tuple[int, dict[str, Any]]]) -> tuple[int, list[str]]:
    """Insert queue rows (as the upstream filter would), in one transaction.

    Returns the count and the columns the table has no place for (a run tolerates and
    ignores them too). Values are validated by the run that drains the queue, exactly as
    file rows are, so bad rows arrive as they would from upstream.
    """
    known = {c.name for c in KnowledgeQueueRow.__table__.columns} - {"id"}
    records: list[dict[str, Any]] = []
    ignored: set[str] = set()
    for line, row in rows:
        ignored |= set(row) - known - {"id"}
        record = {k: v for k, v in row.items() if k in known}
        for name in ("source_committed_at", "created_at", "consumed_at"):
            if isinstance(record.get(name), str):
                try:
                    record[name] = datetime.fromisoformat(record[name].replace("Z", "+00:00"))
                except ValueError as exc:
                    raise QueueLoadError(f"line {line}: {name} is not a timestamp") from exc
        records.append(record)
    if records:
        with Session(engine) as session, session.begin():
            for record in records:
                session.add(KnowledgeQueueRow(**record))
    return len(records), sorted(ignored)
