"""decision_queue.models_digest: which models decided each row

An open review item decided by models since retrained is decided again by the next run
that reads it (decided ones are left alone). Rows stored before this revision have none:
they count as decided by other models.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("decision_queue") as batch:
        batch.add_column(sa.Column("models_digest", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("decision_queue") as batch:
        batch.drop_column("models_digest")
