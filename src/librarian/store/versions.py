"""A plain document's versions. A document is read whole, so a requirement a new version
no longer holds has left it: its open item is closed as withdrawn (status `withdrawn`,
out of every queue), a decided one keeps its decision and is marked as no longer in the
document (`withdrawn_at`; the OpenCRE export leaves its links out, counted). A
requirement that comes back is restored. The queue's JSONL and table are read a part at
a time, never whole: nothing is withdrawn from them."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from librarian.store.decisions import REVIEW_REQUIRED, WITHDRAWN
from librarian.store.tables import DecisionRow

SHOWN = 10  # withdrawn requirements a run names; the rest are counted


@dataclass(frozen=True)
class Withdrawn:
    """What a run of a document's new version withdrew: by the ids its rows have there."""

    closed: tuple[str, ...] = ()  # open items closed as withdrawn
    marked: tuple[str, ...] = ()  # decided items marked as no longer in the document
    restored: tuple[str, ...] = ()  # back in the document

    def lines(self) -> list[str]:
        out = []
        if self.closed:
            out.append(
                f"{_count(self.closed)} no longer in the document: open item closed as "
                f"withdrawn ({_named(self.closed)})"
            )
        if self.marked:
            out.append(
                f"{_count(self.marked)} no longer in the document: decided, marked so "
                f"and left out of the OpenCRE export ({_named(self.marked)})"
            )
        if self.restored:
            out.append(
                f"{_count(self.restored)} back in the document: restored ({_named(self.restored)})"
            )
        return out


def withdraw_missing(
    engine: Engine, artifact_id: str, present: Collection[str], now: datetime | None = None
) -> Withdrawn:
    """Closes or marks the stored items of document `artifact_id` whose chunk is not in
    `present` (the chunks its version just read), and restores those back in it."""
    now = now or datetime.now(UTC)
    closed, marked, restored = set(), set(), set()
    with Session(engine) as session, session.begin():
        rows = session.scalars(select(DecisionRow).where(DecisionRow.artifact_id == artifact_id))
        for row in rows:
            name = row_name(row.chunk_id)
            if row.chunk_id in present:
                if row.withdrawn_at is not None:
                    row.withdrawn_at = None
                    row.status = REVIEW_REQUIRED if row.status == WITHDRAWN else row.status
                    restored.add(name)
                continue
            if row.withdrawn_at is not None:
                continue
            row.withdrawn_at = now
            if row.status == REVIEW_REQUIRED and row.consumed_at is None:
                row.status = WITHDRAWN
                closed.add(name)
            else:
                marked.add(name)
    return Withdrawn(tuple(sorted(closed)), tuple(sorted(marked - closed)), tuple(sorted(restored)))


def decided_but_gone(session: Session) -> int:
    """Decided or linked sections no longer in their document."""
    return int(
        session.execute(
            select(func.count())
            .select_from(DecisionRow)
            .where(DecisionRow.withdrawn_at.is_not(None), DecisionRow.status != WITHDRAWN)
        ).scalar_one()
    )


def row_name(chunk_id: str) -> str:
    """A plain row's id in its document (`plain:<digest>:<id>` -> `<id>`)."""
    return chunk_id.split(":", 2)[-1]


def _count(names: tuple[str, ...]) -> str:
    return f"{len(names)} requirement" + ("s" if len(names) != 1 else "")


def _named(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")
