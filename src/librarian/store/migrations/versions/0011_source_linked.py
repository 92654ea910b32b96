"""decision_queue.source_linked: how the item's source was linked when it was decided
(`SourceStatus.said`), a column of its own rather than a part of the audit text. The
unmappable gate's verdict is already `reason_code` (UNMAPPABLE), now written from the
decision itself.

Rows stored before this revision get the value their audit text holds.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0011", "0010"
branch_labels = depends_on = None

AUDIT_PART = "source="
COLUMN = "source_linked"


def upgrade() -> None:
    op.add_column("decision_queue", sa.Column(COLUMN, sa.Text, nullable=True))
    queue = sa.table(
        "decision_queue", sa.column("id"), sa.column("envelope", sa.JSON), sa.column(COLUMN)
    )
    bind = op.get_bind()
    said = [
        {"row": row_id, "said": found}
        for row_id, envelope in bind.execute(sa.select(queue.c.id, queue.c.envelope))
        if (found := _said(envelope)) is not None
    ]
    if said:  # one statement for them all
        change = queue.update().where(queue.c.id == sa.bindparam("row"))
        bind.execute(change.values(source_linked=sa.bindparam("said")), said)


def _said(envelope: object) -> str | None:
    retrieval = envelope.get("retrieval") if isinstance(envelope, dict) else None
    retriever = str(retrieval.get("retriever", "")) if isinstance(retrieval, dict) else ""
    part = next((p for p in retriever.split("; ") if p.startswith(AUDIT_PART)), None)
    return part[len(AUDIT_PART) :] if part else None


def downgrade() -> None:
    with op.batch_alter_table("decision_queue") as batch:
        batch.drop_column(COLUMN)
