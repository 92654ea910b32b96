"""A source's items still open in the store, as the sections they were decided from: what
a relink decides again (`job.OpenItems`)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from librarian.schemas.envelopes import ReviewItem
from librarian.schemas.records import Section, span_index_of
from librarian.store.decisions import REVIEW_REQUIRED, section_of
from librarian.store.tables import DecisionRow


def open_sections(session: Session, source: str) -> list[Section]:
    """The source's open review items, as the sections they were decided from."""
    found = session.execute(
        select(DecisionRow.envelope, DecisionRow.span_key)
        .where(
            DecisionRow.source_key == source,
            DecisionRow.status == REVIEW_REQUIRED,
            DecisionRow.consumed_at.is_(None),
        )
        .order_by(DecisionRow.id)
    ).all()
    # Its span too: the section's key is the stored item's (a run's earlier items are
    # told from the window's rows by it).
    return [
        section_of(ReviewItem.model_validate(envelope)).model_copy(
            update={"line": n, "span_index": span_index_of(span_key)}
        )
        for n, (envelope, span_key) in enumerate(found, start=1)
    ]


def open_sources(session: Session) -> list[str]:
    """Every source with an item open, for an error that names them."""
    rows = session.execute(
        select(DecisionRow.source_key)
        .where(DecisionRow.status == REVIEW_REQUIRED, DecisionRow.consumed_at.is_(None))
        .distinct()
    ).scalars()
    return sorted(str(r) for r in rows if r)
