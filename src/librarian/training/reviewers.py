"""The reviewers' decisions as training links: what `train --links DB_URL` learns from."""

from __future__ import annotations

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from librarian.store.human import by_bulk
from librarian.store.tables import HumanDecisionRow
from librarian.training.links import TrainingLink

REVIEWERS_FRAMEWORK = "reviewers"


def reviewer_links(engine: Engine) -> list[TrainingLink]:
    """Approved and corrected decisions, as curated links from the framework 'reviewers';
    not bulk approvals (nobody looked at those items one by one)."""
    with Session(engine) as session:
        rows = session.execute(
            select(HumanDecisionRow)
            .where(HumanDecisionRow.undone_at.is_(None), HumanDecisionRow.action != "reject")
            .order_by(HumanDecisionRow.id)
        ).scalars()
        return [
            TrainingLink(REVIEWERS_FRAMEWORK, row.review_id, row.text, cre, curated=True)
            for row in rows
            if not by_bulk(row.record)
            for cre in (row.final_cre_ids or "").split()
        ]
