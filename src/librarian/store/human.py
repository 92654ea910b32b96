"""Reviewers' decisions: recorded as RFC HumanDecisions, one transaction with the item.

Deciding an item stamps its `consumed_at` with a compare-and-set (`... WHERE consumed_at
IS NULL`): of two reviewers deciding one item, the second is told who decided it, and
nothing is doubled or lost. Undo stamps the decision `undone_at` and reopens the item.
Changing a decision adds a new one that supersedes it (compare-and-set on the old one);
only the standing decision (`HumanDecisionRow.standing`) counts anywhere.
What a decision means (approve / correct / reject) is `review/decisions.py`'s.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from librarian.errors import InputError
from librarian.schemas.human import (
    HumanDecision,
    dump_decision,
)
from librarian.store.decisions import REVIEW_REQUIRED
from librarian.store.review import aware
from librarian.store.tables import DecisionRow, HumanDecisionRow, ReviewAliasRow
from librarian.store.versions import reopened_status, withdrawn_yet_decided

WORKBENCH = "workbench"


class ReviewError(InputError):
    """A decision cannot be recorded as asked; the message says why."""


class ReviewImportError(ReviewError):
    """A sheet or decision file cannot be applied; the message names the row."""


class AlreadyDecided(ReviewError):
    def __init__(self, review_id: str, by: str, at: datetime) -> None:
        super().__init__(f"{review_id} was already decided by {by} at {at:%Y-%m-%d %H:%M} UTC")
        self.by = by


def open_row(session: Session, review_id: str) -> DecisionRow:
    row = session.execute(
        select(DecisionRow).where(
            DecisionRow.review_id == review_id, DecisionRow.status == REVIEW_REQUIRED
        )
    ).scalar_one_or_none()
    if row is None:
        now_id = current_review_id(session, review_id)
        if now_id is not None:
            raise ReviewError(
                f"{review_id} was decided again by newer models: it is {now_id} now; open "
                "it again to see what they suggest"
            )
        raise ReviewError(f"no review item {review_id!r}")
    return row


def current_review_id(session: Session, review_id: str) -> str | None:
    """The review id an item decided again by newer models has now, from an earlier one
    (None: not one of ours)."""
    found = session.execute(
        select(DecisionRow.review_id)
        .join(ReviewAliasRow, ReviewAliasRow.decision_row_id == DecisionRow.id)
        .where(ReviewAliasRow.review_id == review_id)
    ).scalar_one_or_none()
    return str(found) if found else None


def store_decision(
    session: Session, row: DecisionRow, decision: HumanDecision, note: str | None, source: str
) -> None:
    # The item as the reviewer saw it: still open, still the same review id (a run that
    # re-decides open items gives the row a new one; the decision must not land on that).
    claimed = session.execute(
        update(DecisionRow)
        .where(
            DecisionRow.id == row.id,
            DecisionRow.consumed_at.is_(None),
            DecisionRow.status == REVIEW_REQUIRED,
            DecisionRow.review_id == decision.review_id,
        )
        .values(consumed_at=decision.decided_at)
        .execution_options(synchronize_session=False)
    )
    if claimed.rowcount != 1:  # type: ignore[attr-defined]
        session.refresh(row)
        if row.consumed_at is None or row.review_id != decision.review_id:
            raise ReviewError(
                f"{decision.review_id} was decided again by newer models while it was open "
                "here; open the item again to see what they suggest"
            )
        raise already_decided(session, row)
    session.add(_decision_row(row, decision, note, source))
    session.flush()


def _decision_row(
    row: DecisionRow,
    decision: HumanDecision,
    note: str | None,
    source: str,
    supersedes: HumanDecisionRow | None = None,
) -> HumanDecisionRow:
    knowledge = row.envelope.get("knowledge", {})
    return HumanDecisionRow(
        decision_uuid=decision.decision_id,
        decision_row_id=row.id,
        review_id=decision.review_id,
        chunk_id=row.chunk_id,
        pipeline_run_id=row.pipeline_run_id,
        action=decision.action,
        final_cre_ids=" ".join(decision.cre_ids) or None,
        decided_by=decision.decided_by,
        decided_at=decision.decided_at,
        note=(note or "").strip() or None,
        record=dump_decision(decision),
        text=row.text,
        source_standard=(knowledge.get("source") or {}).get("repo"),
        imported_from=source,
        supersedes_id=supersedes.id if supersedes is not None else None,
    )


def standing_decision(session: Session, row: DecisionRow) -> HumanDecisionRow | None:
    """The decision that counts for the item now, if a reviewer of ours made one."""
    return session.execute(
        select(HumanDecisionRow)
        .where(HumanDecisionRow.decision_row_id == row.id, HumanDecisionRow.standing())
        .order_by(HumanDecisionRow.id.desc())
        .limit(1)
    ).scalar_one_or_none()


def supersede(
    session: Session,
    row: DecisionRow,
    old: HumanDecisionRow,
    decision: HumanDecision,
    note: str | None,
    source: str,
) -> None:
    """Record `decision` in place of `old`, which is kept and stamped superseded (never
    edited). A compare-and-set on `old`: when it was changed or undone meanwhile, nothing
    is recorded and the reviewer is told."""
    taken = session.execute(
        update(HumanDecisionRow)
        .where(HumanDecisionRow.id == old.id, HumanDecisionRow.standing())
        .values(superseded_at=decision.decided_at)
        .execution_options(synchronize_session=False)
    )
    if taken.rowcount != 1:  # type: ignore[attr-defined]
        raise ReviewError(
            f"{decision.review_id}: the decision you meant to change was changed or undone "
            "meanwhile; open the item again to see the one that stands"
        )
    session.add(_decision_row(row, decision, note, source, supersedes=old))
    session.flush()


def already_decided(session: Session, row: DecisionRow) -> AlreadyDecided:
    by = standing_decision(session, row)
    if by is None:  # decided by another review tool on the same table
        session.refresh(row)
        when = aware(row.consumed_at or datetime.now(UTC))
        return AlreadyDecided(str(row.review_id), "another review tool", when)
    return AlreadyDecided(str(row.review_id), by.decided_by, aware(by.decided_at))


def undo_last(session: Session, reviewer: str, among: Collection[str] | None = None) -> str | None:
    """Take back `reviewer`'s latest decision still standing (of the items `among`, when
    given: what one browser decided): the item is open again, or, when that decision
    changed an earlier one, the earlier one stands again. Returns its review id, or None
    when there is nothing to undo."""
    last = latest_standing(session, reviewer, among)
    if last is None:
        return None
    take_back(session, last)
    return last.review_id


def standing_on(session: Session, review_id: str) -> HumanDecisionRow | None:
    """The decision that stands on item `review_id` now (None: it is open)."""
    return session.execute(
        select(HumanDecisionRow)
        .where(HumanDecisionRow.review_id == review_id, HumanDecisionRow.standing())
        .order_by(HumanDecisionRow.id.desc())
        .limit(1)
    ).scalar_one_or_none()


def latest_standing(
    session: Session, reviewer: str, among: Collection[str] | None = None
) -> HumanDecisionRow | None:
    """`reviewer`'s latest decision that still stands (of the items `among`)."""
    mine = select(HumanDecisionRow).where(
        HumanDecisionRow.decided_by == reviewer, HumanDecisionRow.standing()
    )
    if among is not None:
        mine = mine.where(HumanDecisionRow.review_id.in_(list(among)))
    return session.execute(
        mine.order_by(HumanDecisionRow.decided_at.desc(), HumanDecisionRow.id.desc()).limit(1)
    ).scalar_one_or_none()


def take_back(session: Session, last: HumanDecisionRow) -> None:
    """Undo `last`, as compare-and-sets: only while it still stands (a lead's change or
    another undo that committed since wins, and this one is refused), and the item reopens
    only while it is still closed. Two standing decisions on one item cannot result."""
    now = datetime.now(UTC)
    taken = session.execute(
        update(HumanDecisionRow)
        .where(HumanDecisionRow.id == last.id, HumanDecisionRow.standing())
        .values(undone_at=now)
        .execution_options(synchronize_session=False)
    )
    if taken.rowcount != 1:  # type: ignore[attr-defined]
        raise ReviewError(
            f"{last.review_id}: the decision you meant to undo was changed or undone "
            "meanwhile; open the item again to see the one that stands"
        )
    if last.supersedes_id is not None:  # undoing a change: the decision it replaced stands
        restored = session.execute(
            update(HumanDecisionRow)
            .where(
                HumanDecisionRow.id == last.supersedes_id,
                HumanDecisionRow.superseded_at.is_not(None),
                HumanDecisionRow.undone_at.is_(None),
            )
            .values(superseded_at=None)
            .execution_options(synchronize_session=False)
        )
        if restored.rowcount != 1:  # type: ignore[attr-defined]
            raise ReviewError(f"{last.review_id}: the decision it changed cannot stand again")
        return
    # An item whose section left its document closes as withdrawn again, not open.
    reopened = session.execute(
        update(DecisionRow)
        .where(DecisionRow.id == last.decision_row_id, DecisionRow.consumed_at.is_not(None))
        .values(consumed_at=None, status=reopened_status())
        .execution_options(synchronize_session=False)
    )
    if reopened.rowcount != 1:  # type: ignore[attr-defined]
        raise ReviewError(f"{last.review_id}: the item is open already; nothing to undo")


def violations(session: Session) -> list[str]:
    """What must never be: an item with more than one standing decision, or a standing
    decision on an item that is open, or closed as withdrawn (`librarian queue check`)."""
    counted = session.execute(
        select(HumanDecisionRow.decision_row_id, func.count())
        .where(HumanDecisionRow.standing())
        .group_by(HumanDecisionRow.decision_row_id)
    ).all()
    rows = {int(r): int(n) for r, n in counted}
    out = [f"item row {r}: {n} standing decisions" for r, n in sorted(rows.items()) if n > 1]
    opened = session.execute(
        select(DecisionRow.id, DecisionRow.review_id)
        .join(HumanDecisionRow, HumanDecisionRow.decision_row_id == DecisionRow.id)
        .where(HumanDecisionRow.standing(), DecisionRow.consumed_at.is_(None))
        .distinct()
    ).all()
    out += [f"{review} (row {r}): open, with a standing decision" for r, review in opened]
    return out + withdrawn_yet_decided(session)


# --- what the decisions say ----------------------------------------------------------------


def decided_since(session: Session, reviewer: str, since: datetime) -> int:
    return int(
        session.execute(
            select(func.count(HumanDecisionRow.id)).where(
                HumanDecisionRow.decided_by == reviewer,
                HumanDecisionRow.standing(),
                HumanDecisionRow.decided_at >= since,
            )
        ).scalar_one()
    )


@dataclass(frozen=True)
class Agreement:
    agreed: int  # the first suggestion was right: kept among the final links
    decided: int  # one at a time: a bulk approval says nothing of the suggestion's worth
    bulk: int = 0  # bulk approvals, counted apart

    @property
    def rate(self) -> float:
        return self.agreed / self.decided if self.decided else 0.0


def _standing_against_first(session: Session, key: Any) -> Sequence[Any]:
    """Each standing decision as (`key`, the item's first suggestion, the CREs decided,
    the HumanDecision record): what agreement with the first suggestion is read from."""
    return session.execute(
        select(key, DecisionRow.top_cre_id, HumanDecisionRow.final_cre_ids)
        .add_columns(HumanDecisionRow.record)
        .join(DecisionRow, DecisionRow.id == HumanDecisionRow.decision_row_id)
        .where(HumanDecisionRow.standing())
    ).all()


def agreement_by_reason(session: Session) -> dict[str, Agreement]:
    """Per reason code, how often the first suggestion was right (kept among the final
    links, alone or with others): the number that says when the threshold could come
    down."""
    rows = _standing_against_first(session, DecisionRow.reason_code)
    agreed: dict[str, int] = {}
    decided: dict[str, int] = {}
    bulk: dict[str, int] = {}
    for code, top, final, record in rows:
        reason = str(code)
        if by_bulk(record):
            bulk[reason] = bulk.get(reason, 0) + 1
            continue
        decided[reason] = decided.get(reason, 0) + 1
        kept = top is not None and top in (final or "").split()
        agreed[reason] = agreed.get(reason, 0) + kept
    return {
        r: Agreement(agreed.get(r, 0), decided.get(r, 0), bulk.get(r, 0))
        for r in sorted({*decided, *bulk})
    }


# `ui.keybind_used` of a bulk approval (the workbench's "approve the first suggestion of").
BULK = "bulk"


def by_bulk(record: Mapping[str, Any] | None) -> bool:
    """A decision made in bulk: nobody looked at the item's suggestions one by one, so it
    argues for no threshold, calibration or agreement figure."""
    ui = (record or {}).get("ui") or {}
    return isinstance(ui, Mapping) and ui.get("keybind_used") == BULK


def standing_decisions(session: Session) -> list[HumanDecision]:
    """Every decision not undone, oldest first, as the RFC HumanDecision it was stored as."""
    rows = session.execute(
        select(HumanDecisionRow.record)
        .where(HumanDecisionRow.standing(), HumanDecisionRow.record.is_not(None))
        .order_by(HumanDecisionRow.decided_at, HumanDecisionRow.id)
    ).scalars()
    return [HumanDecision.model_validate(record) for record in rows]


def standing_same(session: Session, row: DecisionRow, decision: HumanDecision) -> bool:
    """True when the item already carries this decision (nothing to do); AlreadyDecided
    when it carries another."""
    if row.consumed_at is None:
        return False
    if same_as_standing(standing_decision(session, row), decision):
        return True
    raise already_decided(session, row)


def same_as_standing(standing: HumanDecisionRow | None, decision: HumanDecision) -> bool:
    record = standing.record if standing is not None else None
    return record is not None and HumanDecision.model_validate(record).same_decision(decision)


@dataclass(frozen=True)
class ReviewerStats:
    """One reviewer's standing decisions: how many, how often the first suggestion was
    right (kept among the final links), and the median time an item took (where the
    workbench measured it)."""

    reviewer: str
    decided: int  # one at a time
    agreed: int
    median_ms: int | None
    bulk: int = 0  # bulk approvals, counted apart

    @property
    def rate(self) -> float:
        return self.agreed / self.decided if self.decided else 0.0


def reviewer_stats(session: Session) -> list[ReviewerStats]:
    rows = _standing_against_first(session, HumanDecisionRow.decided_by)
    by: dict[str, list[tuple[bool, int | None]]] = {}
    bulk: dict[str, int] = {}
    for who, top, final, record in rows:
        if by_bulk(record):
            bulk[str(who)] = bulk.get(str(who), 0) + 1
            continue
        kept = top is not None and top in (final or "").split()
        ms = ((record or {}).get("ui") or {}).get("review_duration_ms")
        by.setdefault(str(who), []).append((kept, ms if isinstance(ms, int) else None))
    out = []
    for who in sorted({*by, *bulk}):
        marks = by.get(who, [])
        times = sorted(ms for _, ms in marks if ms is not None)
        median = times[len(times) // 2] if times else None
        agreed = sum(k for k, _ in marks)
        out.append(ReviewerStats(who, len(marks), agreed, median, bulk.get(who, 0)))
    return out
