"""Three tables for issues 37, 38 and 41:
- run_policies: the risk policy each committed run decided under, so that relink, the
  workbench's re-scorer, `train`'s preview and `queue status` keep the team's promise;
- reviewers: who may sign in to the workbench (name, lead, an scrypt hash of their key);
- review_aliases: the earlier review ids of items decided again while open, so that an
  item's old address (a tab, a bookmark, a file) leads to it.

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0010", "0009"
branch_labels = depends_on = None


def upgrade() -> None:
    moment = sa.DateTime(timezone=True)
    op.create_table(
        "run_policies",
        sa.Column("run_id", sa.String(128), primary_key=True),
        sa.Column("policy", sa.JSON, nullable=False),
        sa.Column("created_at", moment, nullable=False),
    )
    op.create_table(
        "reviewers",
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("lead", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("secret_hash", sa.String(256), nullable=False),
        sa.Column("created_at", moment, nullable=False),
    )
    op.create_table(
        "review_aliases",
        sa.Column("review_id", sa.String(64), primary_key=True),
        sa.Column("decision_row_id", sa.Integer, nullable=False, index=True),
        sa.Column("created_at", moment, nullable=False),
    )


def downgrade() -> None:
    for table in ("review_aliases", "reviewers", "run_policies"):
        op.drop_table(table)
