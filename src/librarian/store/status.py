"""Each stored section's status, in the words of OpenCRE's MyOpenCRE RFC (OpenCRE #876):
read from the store as it is now, never stored beside it (so it cannot disagree).

- AUTO_MAPPED: linked by a run.
- NEEDS_REVIEW: open in the review queue.
- UNMAPPABLE: open, and the unmappable gate found no CRE that covers it.
- USER_CONFIRMED: a person's decision stands that links it (approve or correct); an item
  another review tool closed on the shared queue table counts here too, the handoff
  contract recording that it was decided, not how.
- USER_REJECTED: a person's decision stands that no CRE fits.
- WITHDRAWN (ours: OpenCRE's RFC has no word for it): open when its section left its
  document, closed so (`store/versions.py`); or open on a text its update replaced,
  closed as superseded (`store/decisions.supersede`). An item closed so under a standing
  decision (a withdrawal that raced a reviewer: `librarian queue check` names it) counts
  by its decision: a person's decision is never lost from the counts.

A run never maps a person's decision again: a decided item keeps its decision until its
text changes (then the new text is a new item, an update of it).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from librarian.schemas.envelopes import UNMAPPABLE
from librarian.store.decisions import LINKED, SUPERSEDED, WITHDRAWN
from librarian.store.tables import DecisionRow, HumanDecisionRow

AUTO_MAPPED = "AUTO_MAPPED"
NEEDS_REVIEW = "NEEDS_REVIEW"
USER_CONFIRMED = "USER_CONFIRMED"
USER_REJECTED = "USER_REJECTED"
WITHDRAWN_STATUS = "WITHDRAWN"
STATUSES = (AUTO_MAPPED, NEEDS_REVIEW, UNMAPPABLE, USER_CONFIRMED, USER_REJECTED, WITHDRAWN_STATUS)


def section_status(row_status: str, reason: str | None, decided: bool, action: str | None) -> str:
    """`action`: the standing decision's (approve, correct, reject), None when none."""
    if row_status == LINKED:
        return AUTO_MAPPED
    if decided:
        return USER_REJECTED if action == "reject" else USER_CONFIRMED
    if row_status in (WITHDRAWN, SUPERSEDED):
        return WITHDRAWN_STATUS
    return UNMAPPABLE if reason == UNMAPPABLE else NEEDS_REVIEW


def standing_actions(session: Session, row_ids: Sequence[int]) -> dict[int, str]:
    """The standing decision's action of each decided row among `row_ids`."""
    return {row_id: found[0] for row_id, found in standing_of(session, row_ids).items()}


def standing_of(session: Session, row_ids: Sequence[int]) -> dict[int, tuple[str, str, str]]:
    """The standing decision of each decided row among `row_ids`: its action (approve |
    correct | reject), the CREs chosen (space-separated) and its note."""
    out: dict[int, tuple[str, str, str]] = {}
    for start in range(0, len(row_ids), 500):
        part = list(row_ids[start : start + 500])
        found = session.execute(
            select(
                HumanDecisionRow.decision_row_id,
                HumanDecisionRow.action,
                HumanDecisionRow.final_cre_ids,
                HumanDecisionRow.note,
            ).where(HumanDecisionRow.decision_row_id.in_(part), HumanDecisionRow.standing())
        )
        out.update(
            (int(row_id), (str(action), cres or "", note or ""))
            for row_id, action, cres, note in found
        )
    return out


def status_counts(session: Session) -> dict[str, int]:
    """How many stored sections have each status, every status named (0 when none)."""
    counts = dict.fromkeys(STATUSES, 0)
    rows = session.execute(
        select(
            DecisionRow.status,
            DecisionRow.reason_code,
            DecisionRow.consumed_at.is_not(None),
            HumanDecisionRow.action,
            func.count(),
        )
        .outerjoin(
            HumanDecisionRow,
            (HumanDecisionRow.decision_row_id == DecisionRow.id) & HumanDecisionRow.standing(),
        )
        .group_by(
            DecisionRow.status,
            DecisionRow.reason_code,
            DecisionRow.consumed_at.is_not(None),
            HumanDecisionRow.action,
        )
    )
    for row_status, reason, decided, action, n in rows:
        counts[section_status(row_status, reason, bool(decided), action)] += int(n)
    return counts
