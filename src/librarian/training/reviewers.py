"""The reviewers' decisions as training links: what `train --links DB_URL` learns from."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from librarian.store.human import by_bulk
from librarian.store.tables import HumanDecisionRow
from librarian.training.links import TrainingLink

REVIEWERS_FRAMEWORK = "reviewers"


@dataclass(frozen=True)
class ReviewerLinks:
    """What `train` read of the reviewers' decisions, what it used, what it left and why."""

    links: list[TrainingLink]
    read: int  # decisions in the store
    used: int  # approvals and corrections made one by one: `links` come from these
    undone: int  # taken back by their reviewer
    superseded: int  # changed since: only the latest decision of an item is learned
    rejects: int  # a reject says which CRE is wrong, not which is right: no link
    bulk: int  # approved in bulk: nobody looked at those items one by one

    def says(self) -> str:
        return (
            f"reviewers' decisions: read {self.read}, used {self.used} ({len(self.links)} "
            f"links); left out: {self.undone} undone, {self.superseded} changed since (the "
            f"latest decision counts), {self.rejects} rejects (no CRE to "
            f"learn), {self.bulk} bulk approvals (nobody looked at them one by one)"
        )


def reviewer_links(engine: Engine) -> ReviewerLinks:
    """Approved and corrected decisions, as curated links from the framework 'reviewers';
    not bulk approvals (nobody looked at those items one by one), with the counts."""
    with Session(engine) as session:
        rows = list(
            session.execute(select(HumanDecisionRow).order_by(HumanDecisionRow.id)).scalars()
        )
    undone = [r for r in rows if r.undone_at is not None]
    superseded = [r for r in rows if r.undone_at is None and r.superseded_at is not None]
    standing = [r for r in rows if r.undone_at is None and r.superseded_at is None]
    rejects = [r for r in standing if r.action == "reject"]
    bulk = [r for r in standing if r.action != "reject" and by_bulk(r.record)]
    used = [r for r in standing if r.action != "reject" and not by_bulk(r.record)]
    links = [
        TrainingLink(REVIEWERS_FRAMEWORK, row.review_id, row.text, cre, curated=True)
        for row in used
        for cre in (row.final_cre_ids or "").split()
    ]
    return ReviewerLinks(
        links, len(rows), len(used), len(undone), len(superseded), len(rejects), len(bulk)
    )
