"""reviewers: who may sign in to the workbench (name, lead, an scrypt hash of their
secret). From then on a decision's reviewer is the signed-in one, never a name a browser
posts.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# Typed, as Alembic's own script template writes them now.
revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "reviewers",
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("lead", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("secret_hash", sa.String(256), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("reviewers")
