"""Draining the `knowledge_queue` table: claim a batch, decide it, stamp it, one transaction.

On PostgreSQL the claim is `FOR UPDATE SKIP LOCKED`: several consumers can drain one
queue and no row is decided twice. SQLite has no row locks; one consumer at a time.
A row's `consumed_at` is stamped in the transaction that stores its decision, never
before: a batch that fails is rolled back and read again by the next run.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Column, Engine, Select, func, select, type_coerce, update
from sqlalchemy.orm import Session
from sqlalchemy.types import NullType

from librarian.errors import InputError
from librarian.sql import is_postgres
from librarian.store.tables import KnowledgeQueueRow, QueueAttempt

ACCEPTED_LABELS = ("KNOWLEDGE", "UNCERTAIN")
QUEUE_SOURCE = "knowledge_queue"
_TABLE: list[Column[Any]] = list(KnowledgeQueueRow.__table__.columns)  # type: ignore[arg-type]


@dataclass
class ClaimedBatch:
    """An open transaction holding (on PostgreSQL, locking) a batch of queue rows."""

    session: Session
    lines: list[tuple[int, bytes]] = field(default_factory=list)  # (queue id, row as JSON)
    unreadable: dict[int, str] = field(default_factory=dict)  # queue id -> why

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
    # Each column as the driver stored it: SQLite keeps whatever another writer put in a
    # column (a BLOB in `text`, 'not a date' in a timestamp), and converting it while the
    # rows are fetched would fail the whole claim. Such a row is read here, one by one.
    raw = query.with_only_columns(*(type_coerce(c, NullType()).label(c.name) for c in _TABLE))
    if is_postgres(engine):
        raw = raw.with_for_update(skip_locked=True, of=KnowledgeQueueRow)
    try:
        rows = session.execute(raw).mappings().all()
    except Exception:
        session.close()
        raise
    claimed = ClaimedBatch(session)
    for values in rows:
        line, problem = _as_json(dict(values))
        claimed.lines.append((int(values["id"]), line))
        if problem is not None:
            claimed.unreadable[int(values["id"])] = problem
    return claimed


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


def retry(engine: Engine, queue_ids: Collection[int] | None) -> int:
    """Forget the failed attempts of dead letters (`queue_ids`, or all of them): the next
    run claims them again, with MAX_ATTEMPTS more tries. Returns how many."""
    with Session(engine) as session, session.begin():
        query = select(QueueAttempt).where(QueueAttempt.dead_lettered_at.is_not(None))
        if queue_ids is not None:
            query = query.where(QueueAttempt.queue_row_id.in_(list(queue_ids)))
        letters = list(session.execute(query).scalars())
        for letter in letters:
            session.delete(letter)
    return len(letters)


def dead_letters(engine: Engine) -> list[QueueAttempt]:
    with Session(engine) as session:
        query = select(QueueAttempt).where(QueueAttempt.dead_lettered_at.is_not(None))
        return list(session.execute(query.order_by(QueueAttempt.queue_row_id)).scalars())


def _as_json(stored: Mapping[str, Any]) -> tuple[bytes, str | None]:
    """The row as the queue-row JSON `ingest.parse_line` validates, like a file line, and
    why it cannot be read (a column holding a value of the wrong type), or None."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    for column in _TABLE:
        if column.name == "consumed_at":
            continue
        value, problem = _column_value(column, stored[column.name])
        values[column.name] = value
        if problem:
            problems.append(f"{column.name} {problem}")
    why = "the queue row holds a value of the wrong type: " + "; ".join(problems)
    return json.dumps(values).encode("utf-8"), why if problems else None


def _column_value(column: Column[Any], value: Any) -> tuple[Any, str | None]:
    """A stored value as JSON, or None and what is wrong with it."""
    if value is None:
        return None, None
    python_type = column.type.python_type
    if isinstance(value, bytes | bytearray | memoryview):
        return None, f"holds {len(bytes(value))} bytes (a BLOB), not {python_type.__name__}"
    if python_type is datetime:
        return _timestamp(value)
    if python_type is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value), None
    if isinstance(value, python_type) and not isinstance(value, bool):
        return value, None
    return None, f"holds {type(value).__name__} {str(value)[:40]!r}, not {python_type.__name__}"


def _timestamp(value: Any) -> tuple[str | None, str | None]:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None, f"is not a timestamp ({value[:40]!r})"
    if not isinstance(value, datetime):
        return None, f"is not a timestamp ({type(value).__name__})"
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)  # SQLite drops the zone; stored as UTC
    return value.isoformat(), None


def column_problem(row: Mapping[str, Any]) -> tuple[str, str] | None:
    """(column, why) for the first value the queue table cannot hold as it is: a wrong
    type, a string past the column's length (PostgreSQL refuses it, SQLite would keep
    it: the same limits on both), a NUL or an unpaired surrogate. None when all fit."""
    for column in _TABLE:
        if column.name in ("id", "consumed_at") or row.get(column.name) is None:
            continue
        value = row[column.name]
        _, problem = _column_value(column, value)
        if problem is None and isinstance(value, str):
            problem = _text_problem(column, value)
        if problem is not None:
            return column.name, f"{column.name} {problem}"
    return None


def _text_problem(column: Column[Any], value: str) -> str | None:
    length = getattr(column.type, "length", None)
    if length is not None and len(value) > length:
        return f"is {len(value)} characters; the column holds at most {length}"
    if "\x00" in value:
        return "holds a NUL character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "holds an unpaired surrogate (not UTF-8 text)"
    return None


@dataclass(frozen=True)
class QueueCounts:
    """Every row of the table: waiting, consumed, dead letters, and the rows no run
    takes (a label that is not ours, or none)."""

    total: int
    waiting: int
    consumed: int
    dead: int
    not_ours: dict[str, int]


def queue_counts(engine: Engine) -> QueueCounts:
    with Session(engine) as session:
        total = session.execute(select(func.count(KnowledgeQueueRow.id))).scalar_one()
        consumed = session.execute(
            select(func.count(KnowledgeQueueRow.id)).where(
                KnowledgeQueueRow.consumed_at.is_not(None)
            )
        ).scalar_one()
        labels = session.execute(
            select(KnowledgeQueueRow.llm_label, func.count(KnowledgeQueueRow.id))
            .where(
                KnowledgeQueueRow.consumed_at.is_(None),
                func.coalesce(KnowledgeQueueRow.llm_label, "").not_in(ACCEPTED_LABELS),
            )
            .group_by(KnowledgeQueueRow.llm_label)
        ).all()
    dead = len(dead_letters(engine))
    not_ours = {str(label or "no label"): int(n) for label, n in labels}
    return QueueCounts(int(total), pending(engine), int(consumed), dead, not_ours)


class QueueLoadError(InputError):
    """A line meant for the queue table is not a JSON object of queue-row columns."""


def enqueue(engine: Engine, rows: Iterable[tuple[int, dict[str, Any]]]) -> tuple[int, list[str]]:
    """Insert queue rows (as the upstream filter would), in one transaction.

    Returns the count and the columns the table has no place for (a run tolerates and
    ignores them too). Values are validated by the run that drains the queue, exactly as
    file rows are, so bad rows arrive as they would from upstream.
    """
    with Session(engine) as session, session.begin():
        return add_rows(session, rows)


def add_rows(session: Session, rows: Iterable[tuple[int, dict[str, Any]]]) -> tuple[int, list[str]]:
    """`enqueue` in the caller's transaction."""
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
    for record in records:
        session.add(KnowledgeQueueRow(**record))
    return len(records), sorted(ignored)
