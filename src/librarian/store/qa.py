"""Reviewer QA in the store: checks (a decided item put to a second reviewer, blind, or an
item with a trusted answer) and the answers to them. Answers never become decisions: no
training, calibration or count reads them; a lead's adjudication that changes a decision
goes through `review/decisions.change` like any change.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import exists, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from librarian.store.human import ReviewError, by_bulk
from librarian.store.tables import DecisionRow, HumanDecisionRow, QaAnswerRow, QaCheckRow

DOUBLE = "double"
KNOWN = "known"


def cre_set(ids: str | None) -> frozenset[str]:
    return frozenset((ids or "").split())


def sample_double(
    session: Session, share: float, by: str, now: datetime, seed: int | None = None
) -> tuple[int, int]:
    """Put `share` of the standing decisions not yet checked to a second reviewer; returns
    (checks added, decisions that could have been). Drawn at random (`seed` repeats it)."""
    checked = exists().where(
        QaCheckRow.decision_row_id == HumanDecisionRow.decision_row_id, QaCheckRow.kind == DOUBLE
    )
    eligible = session.execute(
        select(HumanDecisionRow.id, HumanDecisionRow.decision_row_id, HumanDecisionRow.review_id)
        .where(HumanDecisionRow.standing(), ~checked)
        .order_by(HumanDecisionRow.id)
    ).all()
    if not eligible:
        return 0, 0
    count = max(1, round(share * len(eligible)))
    for decision_id, row_id, review_id in random.Random(seed).sample(eligible, count):
        session.add(
            QaCheckRow(
                kind=DOUBLE,
                decision_row_id=row_id,
                review_id=review_id,
                first_decision_id=decision_id,
                created_by=by,
                created_at=now,
            )
        )
    return count, len(eligible)


def second_reviewers(session: Session) -> tuple[set[str], set[str]]:
    """(who decided the standing decisions, the registered reviewers who decided none)."""
    from librarian.store.reviewers import reviewers

    decided = set(
        session.execute(
            select(HumanDecisionRow.decided_by).where(HumanDecisionRow.standing()).distinct()
        ).scalars()
    )
    return decided, set(reviewers(session)) - decided


def add_known(session: Session, review_ids: Sequence[str], by: str, now: datetime) -> int:
    """Make decided items known-answer items, their standing decision the trusted answer;
    returns how many were added (an item already one is left as it is)."""
    added = 0
    for review_id in review_ids:
        found = session.execute(
            select(HumanDecisionRow).where(
                HumanDecisionRow.review_id == review_id, HumanDecisionRow.standing()
            )
        ).scalar_one_or_none()
        if found is None:
            raise ReviewError(
                f"{review_id}: no decision of ours stands on it; decide it first (its "
                "decision becomes the trusted answer)"
            )
        already = session.execute(
            select(QaCheckRow.id).where(
                QaCheckRow.decision_row_id == found.decision_row_id, QaCheckRow.kind == KNOWN
            )
        ).first()
        if already:
            continue
        session.add(
            QaCheckRow(
                kind=KNOWN,
                decision_row_id=found.decision_row_id,
                review_id=review_id,
                first_decision_id=found.id,
                known_cre_ids=found.final_cre_ids or "",
                created_by=by,
                created_at=now,
            )
        )
        added += 1
    return added


def pending_check(session: Session, reviewer: str) -> QaCheckRow | None:
    """The oldest check `reviewer` may answer: not their own decision, not their own known
    answer, not answered by them; a double check that nobody answered, whose decision
    still stands (a changed decision is no longer the one to check)."""
    waiting = checks_waiting(session, reviewer, limit=1)
    return waiting[0] if waiting else None


def checks_waiting(session: Session, reviewer: str, limit: int = 1000) -> list[QaCheckRow]:
    """Every check `reviewer` may answer (`pending_check`'s rule), oldest first."""
    first = HumanDecisionRow
    answered_by_them = exists().where(
        QaAnswerRow.check_id == QaCheckRow.id, QaAnswerRow.reviewer == reviewer
    )
    answered = exists().where(QaAnswerRow.check_id == QaCheckRow.id)
    return list(
        session.execute(
            select(QaCheckRow)
            .join(first, first.id == QaCheckRow.first_decision_id)
            .where(
                first.standing(),
                first.decided_by != reviewer,
                QaCheckRow.created_by != reviewer,
                ~answered_by_them,
                (QaCheckRow.kind == KNOWN) | ~answered,
            )
            .order_by(QaCheckRow.id)
            .limit(limit)
        ).scalars()
    )


def check_for(session: Session, check_id: int, reviewer: str) -> QaCheckRow:
    """Check `check_id` when `reviewer` may answer it, else ReviewError saying why not."""
    check = session.get(QaCheckRow, check_id)
    if check is None:
        raise ReviewError(f"no check {check_id}")
    first = session.get(HumanDecisionRow, check.first_decision_id)
    if first is None or reviewer in (first.decided_by, check.created_by):
        raise ReviewError(f"check {check_id} is not one you may answer: its answer is yours")
    return check


def record_answer(
    session: Session,
    check: QaCheckRow,
    reviewer: str,
    cre_ids: Sequence[str],
    rejection: str | None,
    note: str | None,
    now: datetime,
) -> None:
    """Keep `reviewer`'s blind answer. A double check takes one answer: a second reviewer
    racing another is refused, as an item decided twice is."""
    answered = session.execute(
        select(QaAnswerRow.reviewer).where(QaAnswerRow.check_id == check.id)
    ).scalars()
    earlier = set(answered)
    if reviewer in earlier:
        raise ReviewError(f"check {check.id}: you answered it already")
    if check.kind == DOUBLE and earlier:
        raise ReviewError(f"check {check.id} was answered by {min(earlier)} meanwhile")
    values = {"check_id": check.id, "reviewer": reviewer, "cre_ids": " ".join(cre_ids)}
    try:  # a Core insert: a lost race fails this statement, not the session's flush
        session.execute(
            insert(QaAnswerRow).values(**values, rejection=rejection, note=note, answered_at=now)
        )
    except IntegrityError as exc:
        raise ReviewError(f"check {check.id}: you answered it already") from exc


@dataclass(frozen=True)
class Answer:
    reviewer: str
    cre_ids: frozenset[str]
    rejection: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class CheckedItem:
    """A check with what was answered: `first` is the decision that was checked (for a
    known-answer item, the trusted answer and its author)."""

    check_id: int
    kind: str
    review_id: str
    source: str | None
    text: str
    first: Answer
    first_in_bulk: bool
    first_stands: bool
    answers: tuple[Answer, ...]
    adjudicated_by: str | None
    outcome: str | None

    @property
    def disagreed(self) -> tuple[Answer, ...]:
        return tuple(a for a in self.answers if a.cre_ids != self.first.cre_ids)


def checked_items(session: Session) -> list[CheckedItem]:
    """Every check with at least one answer, oldest first."""
    checks = session.execute(
        select(QaCheckRow, HumanDecisionRow, DecisionRow.source_key, DecisionRow.text)
        .join(HumanDecisionRow, HumanDecisionRow.id == QaCheckRow.first_decision_id)
        .join(DecisionRow, DecisionRow.id == QaCheckRow.decision_row_id)
        .where(exists().where(QaAnswerRow.check_id == QaCheckRow.id))
        .order_by(QaCheckRow.id)
    ).all()
    answers: dict[int, list[Answer]] = {}
    for a in session.execute(select(QaAnswerRow).order_by(QaAnswerRow.id)).scalars():
        answers.setdefault(a.check_id, []).append(
            Answer(a.reviewer, cre_set(a.cre_ids), a.rejection, a.note)
        )
    items = []
    for check, first, source, text in checks:
        trusted = check.known_cre_ids if check.kind == KNOWN else first.final_cre_ids
        items.append(
            CheckedItem(
                check_id=check.id,
                kind=check.kind,
                review_id=check.review_id,
                source=source,
                text=text,
                first=Answer(first.decided_by, cre_set(trusted)),
                first_in_bulk=by_bulk(first.record),
                first_stands=first.undone_at is None and first.superseded_at is None,
                answers=tuple(answers.get(check.id, ())),
                adjudicated_by=check.adjudicated_by,
                outcome=check.outcome,
            )
        )
    return items


def stamp_adjudicated(
    session: Session, check_id: int, lead: str, outcome: str, now: datetime
) -> None:
    """Stamp a lead's ruling on a disagreement, once (compare-and-set)."""
    done = session.execute(
        update(QaCheckRow)
        .where(QaCheckRow.id == check_id, QaCheckRow.adjudicated_at.is_(None))
        .values(adjudicated_by=lead, adjudicated_at=now, outcome=outcome)
        .execution_options(synchronize_session=False)
    )
    if done.rowcount != 1:  # type: ignore[attr-defined]
        raise ReviewError(f"check {check_id} was ruled on already, or does not exist")
