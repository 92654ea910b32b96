"""decision_queue.routing: the routing decision beside each stored envelope

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Nullable: explicit fast-path sections search nothing, and rows stored before routing.
    op.add_column("decision_queue", sa.Column("routing", sa.JSON, nullable=True))


def downgrade() -> None:
    op.drop_column("decision_queue", "routing")
