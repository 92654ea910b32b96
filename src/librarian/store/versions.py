"""A plain document's versions. A document is read whole, so a requirement a new version
no longer holds has left it: its open item is closed as withdrawn (status `withdrawn`,
out of every queue), a decided one keeps its decision and is marked as no longer in the
document (`withdrawn_at`; the OpenCRE export leaves its links out, counted). A
requirement that comes back is restored. The queue's JSONL and table are read a part at
a time, never whole: nothing is withdrawn from them.

Only a version read whole and well withdraws: one with rows or pages the reader could
not read, or rows refused where the file was read, or one that would withdraw more than
half of what the document holds (an empty or cut-short file, say) withdraws nothing
unless the run allows it (`librarian run --allow-withdraw`); the run says why, and what
it would have withdrawn.

Each change is a compare-and-set on the item's state (`UPDATE ... WHERE id = ? AND
status = 'review_required' AND consumed_at IS NULL`): a reviewer who decides an item
between the run's read and its write keeps the decision, and the item is marked, never
closed under a standing decision."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, case, func, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from librarian.store.decisions import LINKED, REVIEW_REQUIRED, SUPERSEDED, WITHDRAWN
from librarian.store.tables import DecisionRow, HumanDecisionRow

SHOWN = 10  # withdrawn requirements a run names; the rest are counted
ALLOW_FLAG = "--allow-withdraw"  # what lets a run withdraw what this module holds back


@dataclass(frozen=True)
class Withdrawn:
    """What a run of a document's new version withdrew: by the ids its rows have there.
    `held`: why withdrawal was held back ("": it was not), with what it would have
    withdrawn (`would`)."""

    closed: tuple[str, ...] = ()  # open items closed as withdrawn
    marked: tuple[str, ...] = ()  # decided items marked as no longer in the document
    restored: tuple[str, ...] = ()  # back in the document
    held: str = ""
    would: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        out = []
        if self.held:
            out.append(
                f"withdrawal held back: {self.held}; it would have withdrawn "
                f"{_count(self.would)} ({_named(self.would)}); nothing was withdrawn "
                f"(run again with {ALLOW_FLAG} to withdraw them)"
            )
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


@dataclass(frozen=True)
class _Stored:
    """One stored item of the document, as read before it is changed."""

    id: int
    chunk_id: str
    status: str
    consumed: bool
    withdrawn: bool

    @property
    def open(self) -> bool:
        return self.status == REVIEW_REQUIRED and not self.consumed

    @property
    def current(self) -> bool:
        """In the document as the store knows it (not withdrawn, not superseded)."""
        return not self.withdrawn and self.status in (LINKED, REVIEW_REQUIRED)


def withdraw_missing(
    engine: Engine,
    artifact_id: str,
    present: Collection[str],
    now: datetime | None = None,
    *,
    unread: int = 0,
    allow: bool = False,
) -> Withdrawn:
    """Closes or marks the stored items of document `artifact_id` whose chunk is not in
    `present` (the chunks its version just read), and restores those back in it.
    `unread`: the version's rows or pages that could not be read or were refused; any,
    or a version that would withdraw more than half the document, withdraws nothing
    unless `allow`."""
    now = now or datetime.now(UTC)
    with Session(engine) as session, session.begin():
        rows = _stored(session, artifact_id)
        restored = _restore(session, [r for r in rows if r.chunk_id in present and r.withdrawn])
        gone = [r for r in rows if r.chunk_id not in present and (r.current or r.open)]
        would = tuple(sorted({row_name(r.chunk_id) for r in gone}))
        held = "" if allow else _held_back(rows, present, gone, unread)
        if held:
            return Withdrawn(restored=restored, held=held, would=would)
        closed, marked = _withdraw(session, gone, now)
    shut = set(closed)
    return Withdrawn(tuple(sorted(shut)), tuple(sorted(set(marked) - shut)), restored)


def last_version(engine: Engine, artifact_id: str) -> list[tuple[str, str]]:
    """The document's items as the store holds them now ((each current row's identity in
    the document, its text), in the order they were stored): what its next version is
    matched to by text (`pipeline.aligned`)."""
    with Session(engine) as session:
        found = session.execute(
            select(DecisionRow.chunk_id, DecisionRow.text)
            .where(
                DecisionRow.artifact_id == artifact_id,
                DecisionRow.withdrawn_at.is_(None),
                DecisionRow.status.in_((LINKED, REVIEW_REQUIRED)),
            )
            .order_by(DecisionRow.id)
        ).all()
    latest = {row_name(str(chunk)): str(text) for chunk, text in found}  # the last stored
    return list(latest.items())


def relabel(engine: Engine, artifact_id: str, located: Mapping[str, str]) -> int:
    """The document's current items shown under the ids its new version gives them
    (`located`: chunk -> its row's locator id, "ISP-01#IV.e (paragraph 14)"): an item
    whose text did not change is not stored again, but a person re-lettered it. How many
    were changed."""
    changed = 0
    with Session(engine) as session, session.begin():
        rows = session.scalars(
            select(DecisionRow).where(
                DecisionRow.artifact_id == artifact_id,
                DecisionRow.chunk_id.in_(list(located)),
                DecisionRow.withdrawn_at.is_(None),
            )
        ).all()
        for row in rows:
            knowledge = dict(row.envelope.get("knowledge") or {})
            locator = dict(knowledge.get("locator") or {})
            if locator.get("id") in (None, located[row.chunk_id]):
                continue
            locator["id"] = located[row.chunk_id]
            row.envelope = {**row.envelope, "knowledge": {**knowledge, "locator": locator}}
            changed += 1
    return changed


def _stored(session: Session, artifact_id: str) -> list[_Stored]:
    """The document's stored items, read once (every change after is a compare-and-set)."""
    found = session.execute(
        select(
            DecisionRow.id,
            DecisionRow.chunk_id,
            DecisionRow.status,
            DecisionRow.consumed_at.is_not(None),
            DecisionRow.withdrawn_at.is_not(None),
        ).where(DecisionRow.artifact_id == artifact_id)
    ).all()
    return [_Stored(int(i), str(c), str(s), bool(d), bool(w)) for i, c, s, d, w in found]


def _held_back(
    rows: list[_Stored], present: Collection[str], gone: list[_Stored], unread: int
) -> str:
    """Why this version may not withdraw `gone` ("": it may)."""
    if not gone:
        return ""
    if unread:
        return (
            f"{unread} of this version's rows or pages could not be read or were refused, "
            "so it may not hold all the document does"
        )
    held = {r.chunk_id for r in rows if r.current}
    leaving = held - set(present)
    if 2 * len(leaving) > len(held):
        kept = len(held) - len(leaving)
        return (
            f"this version holds {kept} of the document's {len(held)} requirements (more "
            "than half would leave it: an empty or cut-short file?)"
        )
    return ""


def _withdraw(
    session: Session, gone: Iterable[_Stored], now: datetime
) -> tuple[list[str], list[str]]:
    """Each open item closed as withdrawn, each other marked: by compare-and-set, so an
    item decided since it was read is marked, never closed under its decision."""
    closed, marked = [], []
    for row in gone:
        name = row_name(row.chunk_id)
        if row.open and _changed(session, row.id, _still_open(), status=WITHDRAWN, at=now):
            closed.append(name)
        elif _changed(session, row.id, _not_yet_withdrawn(), at=now):
            marked.append(name)
    return closed, marked


def _restore(session: Session, rows: Iterable[_Stored]) -> tuple[str, ...]:
    """Items back in the document: a closed one open again, a marked one unmarked (an
    item superseded by its update stays superseded)."""
    back = set()
    for row in rows:
        if row.status == SUPERSEDED:
            continue
        reopened = case(
            (DecisionRow.status == WITHDRAWN, REVIEW_REQUIRED), else_=DecisionRow.status
        )
        done = session.execute(
            update(DecisionRow)
            .where(
                DecisionRow.id == row.id,
                DecisionRow.withdrawn_at.is_not(None),
                DecisionRow.status != SUPERSEDED,
            )
            .values(withdrawn_at=None, status=reopened)
            .execution_options(synchronize_session=False)
        )
        if done.rowcount == 1:  # type: ignore[attr-defined]
            back.add(row_name(row.chunk_id))
    return tuple(sorted(back))


def _still_open() -> list[ColumnElement[bool]]:
    return [DecisionRow.status == REVIEW_REQUIRED, DecisionRow.consumed_at.is_(None)]


def _not_yet_withdrawn() -> list[ColumnElement[bool]]:
    return [DecisionRow.withdrawn_at.is_(None), DecisionRow.status.in_((LINKED, REVIEW_REQUIRED))]


def _changed(
    session: Session, row_id: int, while_: list[ColumnElement[bool]], at: datetime, **values: Any
) -> bool:
    """Row `row_id` stamped withdrawn `at` (and given `values`), only while `while_`
    holds of it: False when it no longer did."""
    stamped = func.coalesce(DecisionRow.withdrawn_at, at)
    done = session.execute(
        update(DecisionRow)
        .where(DecisionRow.id == row_id, *while_)
        .values(withdrawn_at=stamped, **values)
        .execution_options(synchronize_session=False)
    )
    return bool(done.rowcount == 1)  # type: ignore[attr-defined]


def reopened_status() -> ColumnElement[str]:
    """The status an item takes when the decision on it is undone: open again, or, when
    its section has left its document, closed as withdrawn (an undo never leaves an open
    item for a requirement the document no longer holds)."""
    return case((DecisionRow.withdrawn_at.is_not(None), WITHDRAWN), else_=REVIEW_REQUIRED)


def decided_but_gone(session: Session) -> int:
    """Decided or linked sections no longer in their document."""
    return int(
        session.execute(
            select(func.count())
            .select_from(DecisionRow)
            .where(
                DecisionRow.withdrawn_at.is_not(None),
                DecisionRow.status.not_in((WITHDRAWN, SUPERSEDED)),
            )
        ).scalar_one()
    )


def withdrawn_yet_decided(session: Session) -> list[str]:
    """What must never be: an item closed as withdrawn (or superseded) under a standing
    decision (a withdrawal that raced a reviewer), for `librarian queue check`."""
    found = session.execute(
        select(DecisionRow.id, DecisionRow.review_id, DecisionRow.status)
        .join(HumanDecisionRow, HumanDecisionRow.decision_row_id == DecisionRow.id)
        .where(HumanDecisionRow.standing(), DecisionRow.status.in_((WITHDRAWN, SUPERSEDED)))
        .distinct()
        .order_by(DecisionRow.id)
    ).all()
    return [
        f"{review} (row {r}): {status}, with a standing decision" for r, review, status in found
    ]


def row_name(chunk_id: str) -> str:
    """A plain row's id in its document (`plain:<digest>:<id>` -> `<id>`)."""
    return chunk_id.split(":", 2)[-1]


def _count(names: tuple[str, ...]) -> str:
    return f"{len(names)} requirement" + ("s" if len(names) != 1 else "")


def _named(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")
