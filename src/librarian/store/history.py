"""What a source already has in the store, for linking it as a whole: the CREs it links
(auto-links and people's approvals and corrections), and its reviewers' decisions with
the text they were made on (the latest MAX_REVIEWED per source)."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import select
from sqlalchemy.orm import Session

from librarian.schemas.records import Reviewed, SourceHistory
from librarian.store.decisions import LINKED
from librarian.store.tables import DecisionRow, HumanDecisionRow

# A source's decisions read per run: enough to calibrate it, bounded in embedding work.
MAX_REVIEWED = 500


def source_history(session: Session, sources: Collection[str]) -> dict[str, SourceHistory]:
    """By source key: what each of `sources` links, and its decided items."""
    out: dict[str, SourceHistory] = {}
    for source in sorted(set(sources)):
        linked = set(
            session.execute(
                select(DecisionRow.top_cre_id).where(
                    DecisionRow.source_key == source,
                    DecisionRow.status == LINKED,
                    DecisionRow.top_cre_id.is_not(None),
                )
            ).scalars()
        )
        reviewed = _reviewed(session, source)
        for item in reviewed:
            linked.update(item.cre_ids)
        if linked or reviewed:
            out[source] = SourceHistory(frozenset(c for c in linked if c), tuple(reviewed))
    return out


def _reviewed(session: Session, source: str) -> list[Reviewed]:
    """The latest standing decision of each decided item (undone ones left out): approved
    and corrected items with their CREs, rejected ones with none (the first suggestion
    was wrong, and no CRE fits)."""
    rows = session.execute(
        select(HumanDecisionRow, DecisionRow)
        .join(DecisionRow, DecisionRow.id == HumanDecisionRow.decision_row_id)
        .where(DecisionRow.source_key == source, HumanDecisionRow.undone_at.is_(None))
        .order_by(HumanDecisionRow.decided_at.desc(), HumanDecisionRow.id.desc())
    ).all()
    seen: set[int] = set()
    out: list[Reviewed] = []
    for human, item in rows:
        if item.id in seen:
            continue
        seen.add(item.id)
        cres = tuple((human.final_cre_ids or "").split()) if human.action != "reject" else ()
        locator = (item.envelope or {}).get("knowledge", {}).get("locator", {})
        out.append(Reviewed(item.span_key, item.text, locator.get("title"), cres))
        if len(out) >= MAX_REVIEWED:
            break
    return out


def decisions_seen(session: Session, source: str) -> int:
    """How many of the source's items people have decided (undone decisions left out)."""
    rows = session.execute(
        select(HumanDecisionRow.decision_row_id)
        .join(DecisionRow, DecisionRow.id == HumanDecisionRow.decision_row_id)
        .where(DecisionRow.source_key == source, HumanDecisionRow.undone_at.is_(None))
        .distinct()
    ).all()
    return len(rows)
