"""qa_checks and qa_answers: reviewer QA. A decided item is put to a second reviewer,
blind (`double`), or carries a trusted answer every other reviewer meets once (`known`);
their answers are kept apart from human_decisions, so no training, calibration or count
reads them.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "qa_checks",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("decision_row_id", sa.Integer, nullable=False),
        sa.Column("review_id", sa.String(64), nullable=False),
        sa.Column("first_decision_id", sa.Integer, nullable=True),
        sa.Column("known_cre_ids", sa.Text, nullable=True),
        sa.Column("created_by", sa.String(256), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("adjudicated_by", sa.String(256), nullable=True),
        sa.Column("adjudicated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("outcome", sa.String(16), nullable=True),
    )
    op.create_index("ix_qa_checks_row", "qa_checks", ["decision_row_id", "kind"])
    op.create_table(
        "qa_answers",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("check_id", sa.Integer, nullable=False),
        sa.Column("reviewer", sa.String(256), nullable=False),
        sa.Column("cre_ids", sa.Text, nullable=False),
        sa.Column("rejection", sa.String(64), nullable=True),
        sa.Column("note", sa.Text, nullable=True),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("check_id", "reviewer", name="uq_qa_answer"),
    )
    op.create_index("ix_qa_answers_check_id", "qa_answers", ["check_id"])


def downgrade() -> None:
    op.drop_index("ix_qa_answers_check_id", "qa_answers")
    op.drop_table("qa_answers")
    op.drop_index("ix_qa_checks_row", "qa_checks")
    op.drop_table("qa_checks")
