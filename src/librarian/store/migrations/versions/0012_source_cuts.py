"""source_cuts: the cut each source has now, as the run or relink that last linked it
chose it, so that `queue status`, the workbench and the suggest API say the cut `run`
and `relink` said (issue 41, item 1). A store from before has none until its next run.

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0012", "0011"
branch_labels = depends_on = None


def upgrade() -> None:
    op.create_table(
        "source_cuts",
        sa.Column("source_key", sa.String(1024), primary_key=True),
        sa.Column("run_id", sa.String(128), nullable=False),
        sa.Column("status", sa.JSON, nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("source_cuts")
