"""queue_attempts: rows of knowledge_queue that errored while processed, and dead letters

Kept beside the upstream filter's table rather than in it: a row that errored (a model
failure, a database refusal) is left unconsumed with its attempts counted here, and after
the last allowed attempt is dead-lettered, so it can never block the queue.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "queue_attempts",
        sa.Column("queue_row_id", sa.Integer, primary_key=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("last_error", sa.Text, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
        sa.Column("dead_lettered_at", TZ, nullable=True, index=True),
    )


def downgrade() -> None:
    op.drop_table("queue_attempts")
