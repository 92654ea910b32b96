"""run_policies: the risk policy each committed run decided under, so that relink, the
workbench's re-scorer, `train`'s preview and `queue status` keep the team's promise
(budget, confidence, guarantee) instead of defaults.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# Typed, as Alembic's own script template writes them now.
revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "run_policies",
        sa.Column("run_id", sa.String(128), primary_key=True),
        sa.Column("policy", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("run_policies")
