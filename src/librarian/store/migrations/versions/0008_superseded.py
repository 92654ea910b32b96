"""human_decisions.superseded_at and .supersedes_id: a decision can be changed. The change
is a new HumanDecision that supersedes the old one (`supersedes_id`); the old one is kept,
stamped `superseded_at`, never edited. What stands is a decision neither undone nor
superseded.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# Typed, as Alembic's own script template writes them now.
revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("human_decisions") as batch:
        batch.add_column(sa.Column("superseded_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("supersedes_id", sa.Integer, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("human_decisions") as batch:
        batch.drop_column("supersedes_id")
        batch.drop_column("superseded_at")
