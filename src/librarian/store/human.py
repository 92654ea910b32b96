"""Reviewers' decisions: recorded as RFC HumanDecisions, one transaction with the item.

Deciding an item stamps its `consumed_at` with a compare-and-set (`... WHERE consumed_at
IS NULL`): of two reviewers deciding one item, the second is told who decided it, and
nothing is doubled or lost. Undo stamps the decision `undone_at` and reopens the item.
An import (a sheet, or HumanDecision JSONL) is checked whole before anything is
written: one bad row refuses it, naming the row; a decision identical to the stored one
changes nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from sqlalchemy import Engine, func, select, update
from sqlalchemy.orm import Session

from librarian.contracts.envelopes import Link
from librarian.contracts.human import (
    HumanDecision,
    LossEvent,
    Rejection,
    Ui,
    dump_decision,
)
from librarian.errors import InputError
from librarian.learning.links import TrainingLink
from librarian.store.decisions import REVIEW_REQUIRED
from librarian.store.review import aware
from librarian.store.tables import DecisionRow, HumanDecisionRow

REVIEWERS_FRAMEWORK = "reviewers"
WORKBENCH = "workbench"
REJECTION_CODES = ("NO_CRE_FITS", "NOT_SECURITY_KNOWLEDGE")
# choose: CREs the reviewer picked (an approve when that is just the first suggestion).
RequestAction = Literal["approve", "choose", "reject"]


class ReviewError(InputError):
    """A decision cannot be recorded as asked; the message says why."""


class ReviewImportError(ReviewError):
    """A sheet or decision file cannot be applied; the message names the row."""


class AlreadyDecided(ReviewError):
    def __init__(self, review_id: str, by: str, at: datetime) -> None:
        super().__init__(f"{review_id} was already decided by {by} at {at:%Y-%m-%d %H:%M} UTC")
        self.by = by


@dataclass(frozen=True)
class DecisionRequest:
    """What a reviewer asked: approve the first suggestion, choose CREs (one or several),
    or reject with a reason; with a note, and how it was decided (keys, time taken)."""

    review_id: str
    action: RequestAction
    reviewer: str
    cre_ids: tuple[str, ...] = ()
    rejection_code: str | None = None
    note: str | None = None
    ui: Ui | None = None


def build_decision(
    row: DecisionRow, request: DecisionRequest, hub_ids: Collection[str], now: datetime
) -> HumanDecision:
    """The RFC HumanDecision for `request` on `row`, or ReviewError saying what is wrong."""
    reviewer = request.reviewer.strip()
    if not reviewer:
        raise ReviewError("no decision without a reviewer name")
    suggested = [s["cre_id"] for s in row.envelope.get("suggested_links") or []]
    top = (row.envelope.get("suggested_links") or [None])[0]
    note = (request.note or "").strip() or None
    base = {"review_id": str(row.review_id), "chunk_id": row.chunk_id,
            "pipeline_run_id": row.pipeline_run_id, "decided_at": now, "decided_by": reviewer,
            "ui": request.ui}  # fmt: skip
    if request.action == "reject":
        code = request.rejection_code or "NO_CRE_FITS"
        if code not in REJECTION_CODES:
            known = ", ".join(REJECTION_CODES)
            raise ReviewError(f"reject reason {code!r} is not one of {known}")
        rejection = Rejection(reason_code=code, reason_message=note)
        return HumanDecision(**base, action="reject", rejection=rejection)
    chosen = _chosen(request, suggested, hub_ids)
    links = [Link(cre_id=c, link_type="LinkedTo", confidence=1.0,
                  rationale=f"{'approved' if chosen == suggested[:1] else 'chosen'} by {reviewer}"
                  + (f": {note}" if note else ""))
             for c in chosen]  # fmt: skip
    if suggested and chosen == suggested[:1]:
        return HumanDecision(**base, action="approve", final_links=links)
    loss = LossEvent(
        input_snapshot={"chunk_id": row.chunk_id, "review_id": row.review_id,
                        "text": row.text[:2000]},
        wrong_prediction={"cre_id": top["cre_id"], "confidence": top["confidence"]} if top else {},
        correct_label={"cre_ids": list(chosen)},
        notes=note,
    )  # fmt: skip
    return HumanDecision(**base, action="correct", final_links=links, loss_event=loss)


def _chosen(request: DecisionRequest, suggested: list[str], hub_ids: Collection[str]) -> list[str]:
    if request.action == "approve":
        if not suggested:
            raise ReviewError("approve needs a suggestion, and this item has none (choose a CRE)")
        return suggested[:1]
    chosen = list(dict.fromkeys(c.strip() for c in request.cre_ids if c.strip()))
    if not chosen:
        raise ReviewError("choose needs at least one CRE id")
    unknown = [c for c in chosen if c not in hub_ids]
    if unknown:
        raise ReviewError(f"unknown CRE id {unknown[0]!r}")
    return chosen


def decide(
    session: Session, request: DecisionRequest, hub_ids: Collection[str], source: str = WORKBENCH
) -> HumanDecision:
    """Record a decision and close the item, in the caller's transaction (it commits)."""
    row = _open_row(session, request.review_id)
    decision = build_decision(row, request, hub_ids, datetime.now(UTC))
    _store(session, row, decision, request.note, source)
    return decision


def _open_row(session: Session, review_id: str) -> DecisionRow:
    row = session.execute(
        select(DecisionRow).where(
            DecisionRow.review_id == review_id, DecisionRow.status == REVIEW_REQUIRED
        )
    ).scalar_one_or_none()
    if row is None:
        raise ReviewError(f"no review item {review_id!r}")
    return row


def _store(
    session: Session, row: DecisionRow, decision: HumanDecision, note: str | None, source: str
) -> None:
    claimed = session.execute(
        update(DecisionRow)
        .where(DecisionRow.id == row.id, DecisionRow.consumed_at.is_(None))
        .values(consumed_at=decision.decided_at)
        .execution_options(synchronize_session=False)
    )
    if claimed.rowcount != 1:  # type: ignore[attr-defined]
        raise _already(session, row)
    knowledge = row.envelope.get("knowledge", {})
    session.add(
        HumanDecisionRow(
            decision_uuid=decision.decision_id, decision_row_id=row.id,
            review_id=decision.review_id, chunk_id=row.chunk_id,
            pipeline_run_id=row.pipeline_run_id, action=decision.action,
            final_cre_ids=" ".join(decision.cre_ids) or None, decided_by=decision.decided_by,
            decided_at=decision.decided_at, note=(note or "").strip() or None,
            record=dump_decision(decision), text=row.text,
            source_standard=(knowledge.get("source") or {}).get("repo"), imported_from=source,
        )
    )  # fmt: skip
    session.flush()


def _already(session: Session, row: DecisionRow) -> AlreadyDecided:
    by = session.execute(
        select(HumanDecisionRow.decided_by, HumanDecisionRow.decided_at)
        .where(HumanDecisionRow.decision_row_id == row.id, HumanDecisionRow.undone_at.is_(None))
        .order_by(HumanDecisionRow.id.desc())
        .limit(1)
    ).first()
    if by is None:  # decided by another review tool on the same table
        session.refresh(row)
        when = aware(row.consumed_at or datetime.now(UTC))
        return AlreadyDecided(str(row.review_id), "another review tool", when)
    return AlreadyDecided(str(row.review_id), by.decided_by, aware(by.decided_at))


def undo_last(session: Session, reviewer: str) -> str | None:
    """Take back `reviewer`'s latest decision still standing: the item is open again.
    Returns its review id, or None when there is nothing to undo."""
    last = session.execute(
        select(HumanDecisionRow)
        .where(HumanDecisionRow.decided_by == reviewer, HumanDecisionRow.undone_at.is_(None))
        .order_by(HumanDecisionRow.decided_at.desc(), HumanDecisionRow.id.desc())
        .limit(1)
    ).scalar_one_or_none()
    if last is None:
        return None
    last.undone_at = datetime.now(UTC)
    session.execute(
        update(DecisionRow).where(DecisionRow.id == last.decision_row_id).values(consumed_at=None)
    )
    return last.review_id


# --- what the decisions say ----------------------------------------------------------------


def decided_since(session: Session, reviewer: str, since: datetime) -> int:
    return int(
        session.execute(
            select(func.count(HumanDecisionRow.id)).where(
                HumanDecisionRow.decided_by == reviewer,
                HumanDecisionRow.undone_at.is_(None),
                HumanDecisionRow.decided_at >= since,
            )
        ).scalar_one()
    )


@dataclass(frozen=True)
class Agreement:
    agreed: int  # approved: the first suggestion was right
    decided: int

    @property
    def rate(self) -> float:
        return self.agreed / self.decided if self.decided else 0.0


def agreement_by_reason(session: Session) -> dict[str, Agreement]:
    """Per reason code, how often reviewers approved the first suggestion: the number that
    says when the threshold could come down."""
    rows = session.execute(
        select(DecisionRow.reason_code, HumanDecisionRow.action, func.count())
        .join(DecisionRow, DecisionRow.id == HumanDecisionRow.decision_row_id)
        .where(HumanDecisionRow.undone_at.is_(None))
        .group_by(DecisionRow.reason_code, HumanDecisionRow.action)
    ).all()
    agreed: dict[str, int] = {}
    decided: dict[str, int] = {}
    for code, action, count in rows:
        reason = str(code)
        decided[reason] = decided.get(reason, 0) + count
        agreed[reason] = agreed.get(reason, 0) + (count if action == "approve" else 0)
    return {r: Agreement(agreed[r], decided[r]) for r in sorted(decided)}


def standing_decisions(session: Session) -> list[HumanDecision]:
    """Every decision not undone, oldest first, as the RFC HumanDecision it was stored as."""
    rows = session.execute(
        select(HumanDecisionRow.record)
        .where(HumanDecisionRow.undone_at.is_(None), HumanDecisionRow.record.is_not(None))
        .order_by(HumanDecisionRow.decided_at, HumanDecisionRow.id)
    ).scalars()
    return [HumanDecision.model_validate(record) for record in rows]


def reviewer_links(engine: Engine) -> list[TrainingLink]:
    """Approved and corrected decisions, as curated links from the framework 'reviewers'."""
    with Session(engine) as session:
        rows = session.execute(
            select(HumanDecisionRow)
            .where(HumanDecisionRow.undone_at.is_(None), HumanDecisionRow.action != "reject")
            .order_by(HumanDecisionRow.id)
        ).scalars()
        return [
            TrainingLink(REVIEWERS_FRAMEWORK, row.review_id, row.text, cre, curated=True)
            for row in rows
            for cre in (row.final_cre_ids or "").split()
        ]


# --- imports: sheets and HumanDecision files ---------------------------------------------------


@dataclass
class ImportResult:
    approved: int = 0
    corrected: int = 0
    rejected: int = 0
    unchanged: int = 0  # identical to the stored decision: nothing to do
    left_open: int = 0
    errors: list[str] = field(default_factory=list)

    def count(self, action: str) -> None:
        if action == "approve":
            self.approved += 1
        elif action == "correct":
            self.corrected += 1
        else:
            self.rejected += 1


@dataclass(frozen=True)
class Planned:
    row: DecisionRow
    decision: HumanDecision
    note: str | None


def import_decisions(
    engine: Engine,
    incoming: Sequence[tuple[str, DecisionRequest | HumanDecision]],
    hub_ids: Collection[str],
    source: str,
) -> ImportResult:
    """Check every (where, decision) first, then record them all in one transaction, or
    none. `where` names the row in errors ("row 3 (review_id ...)")."""
    result = ImportResult()
    with Session(engine) as session, session.begin():
        planned = _plan(session, incoming, hub_ids, result)
        if result.errors:
            session.rollback()
            return result
        for item in planned:
            _store(session, item.row, item.decision, item.note, source)
            result.count(item.decision.action)
    return result


def _plan(
    session: Session,
    incoming: Sequence[tuple[str, DecisionRequest | HumanDecision]],
    hub_ids: Collection[str],
    result: ImportResult,
) -> list[Planned]:
    planned: list[Planned] = []
    seen: set[str] = set()
    now = datetime.now(UTC)
    for where, asked in incoming:
        try:
            if asked.review_id in seen:
                raise ReviewError("this review item appears twice")
            seen.add(asked.review_id)
            row = _open_row(session, asked.review_id)
            decision = _as_decision(row, asked, hub_ids, now)
            if _standing_same(session, row, decision, result):
                continue
            note = asked.note if isinstance(asked, DecisionRequest) else None
            planned.append(Planned(row, decision, note))
        except ReviewError as exc:
            result.errors.append(f"{where}: {exc}")
    return planned


def _as_decision(
    row: DecisionRow, asked: DecisionRequest | HumanDecision, hub_ids: Collection[str],
    now: datetime,
) -> HumanDecision:  # fmt: skip
    if isinstance(asked, DecisionRequest):
        return build_decision(row, asked, hub_ids, now)
    unknown = [c for c in asked.cre_ids if c not in hub_ids]
    if unknown:
        raise ReviewError(f"unknown CRE id {unknown[0]!r}")
    return asked


def _standing_same(
    session: Session, row: DecisionRow, decision: HumanDecision, result: ImportResult
) -> bool:
    """True when the item already carries this decision (nothing to do); AlreadyDecided
    when it carries another."""
    if row.consumed_at is None:
        return False
    standing = session.execute(
        select(HumanDecisionRow.record)
        .where(HumanDecisionRow.decision_row_id == row.id, HumanDecisionRow.undone_at.is_(None))
        .order_by(HumanDecisionRow.id.desc())
        .limit(1)
    ).scalar_one_or_none()
    if standing is not None and HumanDecision.model_validate(standing).same_decision(decision):
        result.unchanged += 1
        return True
    raise _already(session, row)
