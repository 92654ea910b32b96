"""Re-deciding a source's open items with what its reviewers now certify.

A source's cut moves as its reviewers decide (`pipeline.policy`). `relink` takes the
source's items still open in the store, links them again as a whole with its history, and
(with `commit`) stores the new decisions. Every write is conditional on the item being
still open and unchanged (`store.decisions._replace`): an item a person decided is never
touched, even one decided while this runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from librarian.pipeline.pipeline import Pipeline
from librarian.schemas.envelopes import LinkProposal, ReviewItem
from librarian.schemas.records import Section
from librarian.store.decisions import (
    REVIEW_REQUIRED,
    StoredBatch,
    WriteResult,
    section_of,
    write,
)
from librarian.store.history import source_history
from librarian.store.tables import DecisionRow


@dataclass
class Relinked:
    """What relinking one source did (or, without commit, would do)."""

    source: str
    open_items: int = 0
    linked: int = 0  # would now be (or were) linked automatically
    status: dict[str, Any] = field(default_factory=dict)  # the source's cut, as the run's
    stored: WriteResult | None = None


def open_sections(session: Session, source: str) -> list[Section]:
    """The source's open review items, as the sections they were decided from."""
    envelopes = session.execute(
        select(DecisionRow.envelope)
        .where(
            DecisionRow.source_key == source,
            DecisionRow.status == REVIEW_REQUIRED,
            DecisionRow.consumed_at.is_(None),
        )
        .order_by(DecisionRow.id)
    ).scalars()
    return [
        section_of(ReviewItem.model_validate(envelope)).model_copy(update={"line": n})
        for n, envelope in enumerate(envelopes, start=1)
    ]


def open_sources(session: Session) -> list[str]:
    """Every source with an item open, for an error that names them."""
    rows = session.execute(
        select(DecisionRow.source_key)
        .where(DecisionRow.status == REVIEW_REQUIRED, DecisionRow.consumed_at.is_(None))
        .distinct()
    ).scalars()
    return sorted(str(r) for r in rows if r)


def relink(engine: Engine, pipeline: Pipeline, source: str, run_id: str, commit: bool) -> Relinked:
    """Link `source`'s open items again with its history; store them when `commit`."""
    with Session(engine) as session:
        sections = open_sections(session, source)
        history = source_history(session, {source})
    done = Relinked(source, open_items=len(sections))
    if not sections:
        return done
    result = pipeline.link(sections, run_id, history=history)
    done.linked = sum(isinstance(e, LinkProposal) for e in result.envelopes)
    done.status = result.sources.get(source, {})
    if commit:
        batch = StoredBatch(
            run_id,
            result.envelopes,
            {s.chunk_id: s for s in sections},
            [],
            {},
            source,
            models_digest=pipeline.models_digest,
            candidates=result.candidates,
            relink_open=True,
        )
        with Session(engine) as session:
            done.stored = write(session, batch)
            session.commit()
    return done
