"""withdrawn_at: when a section left its document (issue 48, item 3). A plain document is
read whole, so a requirement a new version no longer holds is gone: its open item is
closed as withdrawn (status `withdrawn`), a decided one keeps its decision and is marked.

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0013", "0012"
branch_labels = depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("decision_queue") as batch:
        batch.add_column(sa.Column("withdrawn_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.execute("UPDATE decision_queue SET status = 'review_required' WHERE status = 'withdrawn'")
    with op.batch_alter_table("decision_queue") as batch:
        batch.drop_column("withdrawn_at")
