"""Draining the `knowledge_queue` table: claim a batch, decide it, stamp it, one transaction.

On PostgreSQL the claim is `FOR UPDATE SKIP LOCKED`: several consumers can drain one
queue and no row is decided twice. SQLite has no row locks; one consumer at a time.
A row's `consumed_at` is stamped in the transaction that stores its decision, never
before: a batch that fails is rolled back and read again by the next run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import Engine, func, select, update
from sqlalchemy.orm import Session

from librarian.errors import InputError
from librarian.store.db import is_postgres
from librarian.store.tables import KnowledgeQueueRow

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


def claim(engine: Engine, limit: int) -> ClaimedBatch:
    """Open a transaction and take up to `limit` unconsumed rows, oldest first."""
    session = Session(engine)
    query = (
        select(KnowledgeQueueRow)
        .where(
            KnowledgeQueueRow.consumed_at.is_(None),
            KnowledgeQueueRow.llm_label.in_(ACCEPTED_LABELS),
        )
        .order_by(KnowledgeQueueRow.created_at, KnowledgeQueueRow.id)
        .limit(limit)
    )
    if is_postgres(engine):
        query = query.with_for_update(skip_locked=True)
    try:
        rows = session.execute(query).scalars().all()
    except Exception:
        session.close()
        raise
    return ClaimedBatch(session, [(row.id, _as_json(row)) for row in rows])


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
        count = session.execute(
            select(func.count(KnowledgeQueueRow.id)).where(
                KnowledgeQueueRow.consumed_at.is_(None),
                KnowledgeQueueRow.llm_label.in_(ACCEPTED_LABELS),
            )
        ).scalar_one()
    return int(count)


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
