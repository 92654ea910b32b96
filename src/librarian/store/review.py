"""The reviewers' queue in the database: ReviewItems to read, filter and page through.

An item is open while `consumed_at` is NULL (the upstream handoff contract: any review
tool reads `consumed_at IS NULL AND status = 'review_required'` and sets consumed_at).
Decisions on items are in store/human.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import Select, func, or_, select
from sqlalchemy.orm import Session

from librarian.schemas.records import split_plain_locator_id
from librarian.store.decisions import REVIEW_REQUIRED
from librarian.store.status import NEEDS_REVIEW, section_status, standing_of
from librarian.store.tables import DecisionRow, HumanDecisionRow

ItemStatus = Literal["open", "decided", "all"]
QueueSort = Literal["oldest", "newest", "confidence", "-confidence"]


@dataclass(frozen=True)
class Suggestion:
    cre_id: str
    name: str
    confidence: float
    rationale: str | None = None


@dataclass(frozen=True)
class OpenItem:
    review_id: str
    created_at: datetime
    status: str  # open | decided
    reason: str
    chunk_id: str
    artifact_id: str
    text: str
    source_url: str | None
    suggestions: tuple[Suggestion, ...]
    flags: tuple[str, ...] = ()
    is_update: bool = False
    confidence: float | None = None
    row_id: int = 0
    label: str = ""  # where the section is, for people: "policy.csv § SEC-01 — Passwords"
    section_status: str = NEEDS_REVIEW  # OpenCRE's name for where it stands (store/status.py)
    linked_as: str | None = None  # how its source was linked when it was decided
    # A decided item's standing decision: its action, the CREs chosen, its note.
    decided_as: tuple[str, str, str] | None = None


@dataclass(frozen=True)
class QueueFilter:
    """What the queue page shows: every field narrows it; None is any."""

    status: ItemStatus = "open"
    reason: str | None = None
    source: str | None = None  # part of the artifact or chunk id
    update: bool | None = None
    min_confidence: float | None = None
    max_confidence: float | None = None
    since: datetime | None = None
    until: datetime | None = None
    sort: QueueSort = "oldest"
    decided_by: str | None = None  # decided items whose standing decision is this reviewer's
    action: str | None = None  # ... or this action's (approve | correct | reject)
    # Items left out whatever else matches: those the viewer is checking, blind.
    hidden: frozenset[str] = frozenset()


@dataclass
class QueuePage:
    items: list[OpenItem]
    total: int  # items the filter matches
    page: int
    size: int
    by_reason: dict[str, int] = field(default_factory=dict)  # open items per reason
    decisions: dict[str, ActiveDecision] = field(default_factory=dict)  # review id -> standing

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.size))


def _matching(flt: QueueFilter) -> Select[DecisionRow]:
    query = select(DecisionRow).where(DecisionRow.status == REVIEW_REQUIRED)
    if flt.status == "open":
        query = query.where(DecisionRow.consumed_at.is_(None))
    elif flt.status == "decided":
        query = query.where(DecisionRow.consumed_at.is_not(None))
    if flt.reason:
        query = query.where(DecisionRow.reason_code == flt.reason)
    if flt.source:
        like = f"%{flt.source}%"
        query = query.where(
            or_(
                DecisionRow.source_key == flt.source,
                DecisionRow.artifact_id.like(like),
                DecisionRow.chunk_id.like(like),
            )
        )
    if flt.update is not None:
        query = query.where(DecisionRow.is_update.is_(flt.update))
    if flt.min_confidence is not None:
        query = query.where(DecisionRow.confidence >= flt.min_confidence)
    if flt.max_confidence is not None:
        query = query.where(DecisionRow.confidence <= flt.max_confidence)
    if flt.since is not None:
        query = query.where(DecisionRow.created_at >= flt.since)
    if flt.until is not None:
        query = query.where(DecisionRow.created_at <= flt.until)
    if flt.decided_by or flt.action:
        standing = select(HumanDecisionRow.decision_row_id).where(HumanDecisionRow.standing())
        if flt.decided_by:
            standing = standing.where(HumanDecisionRow.decided_by == flt.decided_by)
        if flt.action:
            standing = standing.where(HumanDecisionRow.action == flt.action)
        query = query.where(DecisionRow.id.in_(standing))
    if flt.hidden:
        query = query.where(DecisionRow.review_id.not_in(sorted(flt.hidden)))
    return query


_ORDER = {
    "oldest": (DecisionRow.created_at, DecisionRow.id),
    "newest": (DecisionRow.created_at.desc(), DecisionRow.id.desc()),
    "confidence": (DecisionRow.confidence, DecisionRow.id),
    "-confidence": (DecisionRow.confidence.desc(), DecisionRow.id),
}


def queue_page(session: Session, flt: QueueFilter, page: int = 1, size: int = 50) -> QueuePage:
    """One page of the items `flt` matches, the total, and open items per reason."""
    query = _matching(flt)
    total = session.execute(select(func.count()).select_from(query.subquery())).scalar_one()
    # Sort and page the ids alone, then load those rows: sorting whole rows would carry
    # every envelope through the sort.
    ids = (
        session.execute(
            query.with_only_columns(DecisionRow.id)
            .order_by(*_ORDER[flt.sort])
            .offset((max(page, 1) - 1) * size)
            .limit(size)
        )
        .scalars()
        .all()
    )
    loaded = {
        r.id: r
        for r in session.execute(select(DecisionRow).where(DecisionRow.id.in_(ids))).scalars()
    }
    rows = [loaded[i] for i in ids]
    counts = session.execute(
        select(DecisionRow.reason_code, func.count())
        .where(DecisionRow.status == REVIEW_REQUIRED, DecisionRow.consumed_at.is_(None))
        .group_by(DecisionRow.reason_code)
    ).all()
    decided = {str(r.review_id): active_decision(session, r.id) for r in rows if r.consumed_at}
    return QueuePage(
        _items(session, rows),
        int(total),
        max(page, 1),
        size,
        {str(reason): int(n) for reason, n in counts},
        {k: v for k, v in decided.items() if v is not None},
    )


def review_items(
    session: Session,
    status: ItemStatus = "open",
    since: datetime | None = None,
    reason: str | None = None,
) -> list[OpenItem]:
    """Every item of a status (and a reason), oldest first (for the file exports)."""
    query = _matching(QueueFilter(status=status, since=since, reason=reason))
    rows = session.execute(query.order_by(*_ORDER["oldest"])).scalars().all()
    return _items(session, rows)


def items_by_id(session: Session, review_ids: Sequence[str]) -> list[OpenItem]:
    """The items with these review ids, in the order given (an id no item has: left out)."""
    found: dict[str, OpenItem] = {}
    for start in range(0, len(review_ids), 500):
        part = list(review_ids[start : start + 500])
        rows = session.execute(select(DecisionRow).where(DecisionRow.review_id.in_(part)))
        found.update((item.review_id, item) for item in _items(session, rows.scalars().all()))
    return [found[r] for r in review_ids if r in found]


def neighbour(
    session: Session, moment: datetime, row_id: int, later: bool, open_only: bool = True
) -> str | None:
    """The review id of the open item just after (or before) the one at (moment, row_id),
    oldest first; after the last, the first one still open (not this one)."""
    base = _matching(QueueFilter(status="open" if open_only else "all"))
    at = (DecisionRow.created_at, DecisionRow.id)
    if later:
        side = or_(at[0] > moment, (at[0] == moment) & (at[1] > row_id))
        order = _ORDER["oldest"]
    else:
        side = or_(at[0] < moment, (at[0] == moment) & (at[1] < row_id))
        order = _ORDER["newest"]
    found = session.execute(base.where(side).order_by(*order).limit(1)).scalars().first()
    if found is None and later:
        others = base.where(DecisionRow.id != row_id).order_by(*_ORDER["oldest"]).limit(1)
        found = session.execute(others).scalars().first()
    return None if found is None else found.review_id


def _items(session: Session, rows: Sequence[DecisionRow]) -> list[OpenItem]:
    decided = standing_of(session, [r.id for r in rows if r.consumed_at is not None])
    return [_item(row, decided.get(row.id)) for row in rows]


def _item(row: DecisionRow, decided: tuple[str, str, str] | None = None) -> OpenItem:
    envelope: dict[str, Any] = row.envelope
    names = {
        c["cre_id"]: c["cre_name"] for c in envelope.get("retrieval", {}).get("candidates", [])
    }
    suggestions = tuple(
        Suggestion(
            s["cre_id"], names.get(s["cre_id"], ""), float(s["confidence"]), s.get("rationale")
        )
        for s in envelope.get("suggested_links") or []
    )
    return OpenItem(
        review_id=str(row.review_id),
        created_at=aware(row.created_at),
        status="open" if row.consumed_at is None else "decided",
        reason=str(row.reason_code),
        chunk_id=row.chunk_id,
        artifact_id=row.artifact_id,
        text=row.text,
        source_url=_source_url(envelope.get("knowledge", {})),
        suggestions=suggestions,
        flags=tuple(envelope.get("update_detection", {}).get("adversarial_flags", [])),
        is_update=row.is_update,
        confidence=row.confidence,
        row_id=row.id,
        label=section_label(envelope.get("knowledge", {}), row.chunk_id),
        section_status=section_status(
            row.status, row.reason_code, row.consumed_at is not None, decided and decided[0]
        ),
        linked_as=row.source_linked,
        decided_as=decided,
    )


def section_label(knowledge: dict[str, Any], chunk_id: str) -> str:
    """Where a section is, in words a person reads: its document and row (a plain input's
    locator is `DOCUMENT#ROW`) or path, and its title; the chunk id only when nothing else
    names it (ids are for machines)."""
    locator = knowledge.get("locator") or {}
    where, title = str(locator.get("id") or ""), str(locator.get("title") or "")
    if plain := split_plain_locator_id(where):
        document, row, place = plain
        named = f"{document} § {row}" + (f" ({place})" if place else "")
        return f"{named} — {title}" if title and title != row else named
    where = str(locator.get("path") or where)
    if where:
        return f"{where} § {title}" if title else where
    return title or chunk_id


def aware(moment: datetime) -> datetime:
    """SQLite gives back naive datetimes; they were stored as UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _source_url(knowledge: dict[str, Any]) -> str | None:
    source, locator = knowledge.get("source", {}), knowledge.get("locator", {})
    if source.get("type") == "github" and source.get("repo") and locator.get("path"):
        ref = source.get("commit_sha") or "HEAD"
        return f"https://github.com/{source['repo']}/blob/{ref}/{locator['path']}"
    url = locator.get("url") or source.get("url")
    return str(url) if url else None


# --- one item, whole ---------------------------------------------------------------------


@dataclass(frozen=True)
class ActiveDecision:
    decided_by: str
    decided_at: datetime
    action: str
    cre_ids: tuple[str, ...]
    note: str | None
    rejection: str | None = None  # a reject's reason code, and its message if any
    # In an item's history: "stands", "changed" (superseded by a later one) or "undone".
    state: str = "stands"


@dataclass(frozen=True)
class ItemDetail:
    item: OpenItem
    envelope: dict[str, Any]
    heading_path: tuple[str, ...]
    prior_text: str | None  # an update: the text decided before, for a diff
    decision: ActiveDecision | None
    history: tuple[ActiveDecision, ...] = ()  # every decision the item had, oldest first


def item_detail(session: Session, review_id: str) -> ItemDetail | None:
    row = session.execute(
        select(DecisionRow).where(DecisionRow.review_id == review_id)
    ).scalar_one_or_none()
    if row is None:
        return None
    prior = None
    if row.prior_chunk_id:
        prior = session.execute(  # the text before this one (a row of the same chunk)
            select(DecisionRow.text)
            .where(DecisionRow.chunk_id == row.prior_chunk_id, DecisionRow.id < row.id)
            .order_by(DecisionRow.id.desc())
            .limit(1)
        ).scalar_one_or_none()
    locator = row.envelope.get("knowledge", {}).get("locator", {})
    headings = tuple(row.heading_path or ()) or (
        (locator["title"],) if locator.get("title") else ()
    )
    history = decision_history(session, row.id)
    standing = next((d for d in reversed(history) if d.state == "stands"), None)
    decided = (
        (standing.action, " ".join(standing.cre_ids), standing.note or "") if standing else None
    )
    item = _item(row, decided)
    return ItemDetail(item, row.envelope, headings, prior, standing, history)


def active_decision(session: Session, row_id: int) -> ActiveDecision | None:
    found = session.execute(
        select(HumanDecisionRow)
        .where(HumanDecisionRow.decision_row_id == row_id, HumanDecisionRow.standing())
        .order_by(HumanDecisionRow.id.desc())
        .limit(1)
    ).scalar_one_or_none()
    return None if found is None else _as_active(found)


def decision_history(session: Session, row_id: int) -> tuple[ActiveDecision, ...]:
    """Every decision the item had, oldest first: the audit of who decided what, changed
    it or took it back."""
    found = session.execute(
        select(HumanDecisionRow)
        .where(HumanDecisionRow.decision_row_id == row_id)
        .order_by(HumanDecisionRow.id)
    ).scalars()
    return tuple(_as_active(row) for row in found)


def _as_active(found: HumanDecisionRow) -> ActiveDecision:
    cre_ids = tuple((found.final_cre_ids or "").split())
    rejection = (found.record or {}).get("rejection") or {}
    why = rejection.get("reason_code")
    if why and rejection.get("reason_message"):
        why = f"{why}: {rejection['reason_message']}"
    state = (
        "undone"
        if found.undone_at is not None
        else "changed"
        if found.superseded_at is not None
        else "stands"
    )
    return ActiveDecision(
        found.decided_by, aware(found.decided_at), found.action, cre_ids, found.note, why, state
    )
