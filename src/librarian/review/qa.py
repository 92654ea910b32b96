"""Reviewer QA a lead can trust: blind second reviews of a sample, known-answer items,
agreement per reviewer and per source, and the disagreements to rule on.

A double check pairs the decision that was made with one other reviewer's blind answer;
agreement is read from those pairs (`review/agreement.py`). A decision made in bulk
("approve the first suggestion of all N") is checked like any other but counted apart:
nobody weighed that item, so it says nothing of how well two reviewers agree. A
known-answer item scores each reviewer who meets it against its trusted answer.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy.orm import Session

from librarian.review.agreement import AgreementFigures, CreSet, figures
from librarian.review.decisions import DecisionRequest, build_decision, change
from librarian.store.human import ReviewError, open_row
from librarian.store.qa import (
    DOUBLE,
    KNOWN,
    CheckedItem,
    check_for,
    checked_items,
    record_answer,
    stamp_adjudicated,
)
from librarian.store.tables import QaCheckRow

FIRST, SECOND = "first", "second"


def answer_check(
    session: Session, check_id: int, request: DecisionRequest, hub_ids: Collection[str]
) -> QaCheckRow:
    """Keep a reviewer's blind answer to a check, read as a decision would be (approve the
    first suggestion, choose CREs, or reject with a reason) and checked the same way."""
    check = check_for(session, check_id, request.reviewer)
    row = open_row(session, check.review_id)
    now = datetime.now(UTC)
    answer = build_decision(row, request, hub_ids, now)
    chosen = [link.cre_id for link in answer.final_links or ()]
    reason = answer.rejection.reason_code if answer.rejection else None
    record_answer(session, check, request.reviewer.strip(), chosen, reason, request.note, now)
    return check


def adjudicate(
    session: Session, check_id: int, lead: str, outcome: str, hub_ids: Collection[str]
) -> str:
    """A lead's ruling on a double check's disagreement: the first decision stands, or the
    second answer replaces it (a change, kept in the item's history). Returns what was
    done, in a line."""
    item = next((i for i in checked_items(session) if i.check_id == check_id), None)
    if item is None or item.kind != DOUBLE or not item.disagreed:
        raise ReviewError(f"check {check_id} is no disagreement to rule on")
    parties = {item.first.reviewer, *(d.reviewer for d in item.disagreed)}
    if lead in parties:
        raise ReviewError(f"{lead} is a party to check {check_id}: another lead rules on it")
    if outcome == SECOND:
        second = item.disagreed[0]
        request = DecisionRequest(
            item.review_id,
            "choose" if second.cre_ids else "reject",
            lead,
            tuple(sorted(second.cre_ids)),
            second.rejection,
            f"ruled on check {check_id}: {second.reviewer}'s answer, over {item.first.reviewer}'s",
        )
        change(session, request, hub_ids, leads=(lead,))
    elif outcome != FIRST:
        raise ReviewError(f"a ruling is {FIRST!r} or {SECOND!r}, not {outcome!r}")
    stamp_adjudicated(session, check_id, lead, outcome, datetime.now(UTC))
    kept = item.first.reviewer if outcome == FIRST else item.disagreed[0].reviewer
    return f"check {check_id} ({item.review_id}): {kept}'s answer stands"


@dataclass(frozen=True)
class Known:
    answered: int
    right: int

    @property
    def percent(self) -> float | None:
        return 100.0 * self.right / self.answered if self.answered else None


@dataclass
class QaReport:
    overall: AgreementFigures
    by_reviewer: dict[str, AgreementFigures]
    by_source: dict[str, AgreementFigures]
    known_by_reviewer: dict[str, Known]
    bulk_checked: int  # double checks of a bulk approval: apart from every figure above
    bulk_same: int
    disagreements: list[CheckedItem] = field(default_factory=list)
    missed_known: list[CheckedItem] = field(default_factory=list)


def qa_report(session: Session) -> QaReport:
    items = checked_items(session)
    doubles = [i for i in items if i.kind == DOUBLE]
    weighed = [i for i in doubles if not i.first_in_bulk]
    bulk = [i for i in doubles if i.first_in_bulk]
    reviewers = sorted({r for i in weighed for r in _coders(i)})
    sources = sorted({i.source or "(no source)" for i in weighed})
    return QaReport(
        overall=figures([_unit(i) for i in weighed]),
        by_reviewer={r: figures([_unit(i) for i in weighed if r in _coders(i)]) for r in reviewers},
        by_source={
            s: figures([_unit(i) for i in weighed if (i.source or "(no source)") == s])
            for s in sources
        },
        known_by_reviewer=_known([i for i in items if i.kind == KNOWN]),
        bulk_checked=len(bulk),
        bulk_same=sum(1 for i in bulk if not i.disagreed),
        disagreements=[i for i in doubles if i.disagreed and i.outcome is None],
        missed_known=[i for i in items if i.kind == KNOWN and i.disagreed],
    )


def _unit(item: CheckedItem) -> list[CreSet]:
    return [item.first.cre_ids, *(a.cre_ids for a in item.answers)]


def _coders(item: CheckedItem) -> set[str]:
    return {item.first.reviewer, *(a.reviewer for a in item.answers)}


def _known(items: Iterable[CheckedItem]) -> dict[str, Known]:
    answered: dict[str, int] = {}
    right: dict[str, int] = {}
    for item in items:
        for a in item.answers:
            answered[a.reviewer] = answered.get(a.reviewer, 0) + 1
            right[a.reviewer] = right.get(a.reviewer, 0) + (a.cre_ids == item.first.cre_ids)
    return {r: Known(answered[r], right[r]) for r in sorted(answered)}
