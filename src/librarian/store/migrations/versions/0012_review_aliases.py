"""review_aliases: the earlier review ids of items decided again while open, so that an
item's old address (a tab, a bookmark, an export, a decision file) leads to it.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# Typed, as Alembic's own script template writes them now.
revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "review_aliases",
        sa.Column("review_id", sa.String(64), primary_key=True),
        sa.Column("decision_row_id", sa.Integer, nullable=False, index=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("review_aliases")
