"""decision_queue speaks the upstream C -> D contract; human_decisions holds RFC
HumanDecisions (who, when, what, why), with undo.

decision_queue v0.2 (upstream): id, chunk_id, artifact_id, pipeline_run_id,
schema_version, source_label, status (linked | review_required), reason_code, review_id,
confidence, envelope, created_at, consumed_at. Another review tool reads
`consumed_at IS NULL AND status = 'review_required'` and sets consumed_at; so a decided
item keeps status review_required and is marked consumed (it was status 'reviewed').

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)
OLD_ACTIONS = {"accept": "approve", "choose": "correct", "reject": "reject"}


def upgrade() -> None:
    with op.batch_alter_table("decision_queue") as batch:
        batch.alter_column(
            "run_id", new_column_name="pipeline_run_id", existing_type=sa.String(128)
        )
        batch.alter_column("review_consumed_at", new_column_name="consumed_at", existing_type=TZ)
        batch.add_column(
            sa.Column("schema_version", sa.String(16), nullable=False, server_default="0.1.0")
        )
        batch.add_column(
            sa.Column("source_label", sa.String(16), nullable=False, server_default="KNOWLEDGE")
        )
        batch.add_column(sa.Column("heading_path", sa.JSON, nullable=True))
    op.execute("UPDATE decision_queue SET status = 'review_required' WHERE status = 'reviewed'")
    op.create_index("ix_decision_open", "decision_queue", ["status", "consumed_at", "created_at"])
    _human_decisions()


def _human_decisions() -> None:
    with op.batch_alter_table("human_decisions") as batch:
        batch.alter_column(
            "decision_id", new_column_name="decision_row_id", existing_type=sa.Integer
        )
        batch.add_column(sa.Column("decision_uuid", sa.String(36), nullable=True))
        batch.add_column(sa.Column("chunk_id", sa.String(512), nullable=True))
        batch.add_column(sa.Column("pipeline_run_id", sa.String(128), nullable=True))
        batch.add_column(sa.Column("decided_by", sa.String(256), nullable=True))
        batch.add_column(sa.Column("record", sa.JSON, nullable=True))
        batch.add_column(sa.Column("note", sa.Text, nullable=True))
        batch.add_column(sa.Column("undone_at", TZ, nullable=True))
        batch.alter_column(
            "cre_id", new_column_name="final_cre_ids", existing_type=sa.String(7), type_=sa.Text
        )
    conn = op.get_bind()
    rows = conn.execute(
        sa.text(
            "SELECT h.id, h.action, h.imported_from, d.chunk_id, d.pipeline_run_id "
            "FROM human_decisions h JOIN decision_queue d ON d.id = h.decision_row_id"
        )
    ).all()
    for row in rows:  # decisions imported from sheets before reviewers had names
        conn.execute(
            sa.text(
                "UPDATE human_decisions SET decision_uuid = :u, action = :a, chunk_id = :c, "
                "pipeline_run_id = :r, decided_by = :b WHERE id = :i"
            ),
            {
                "u": str(uuid.uuid4()),
                "a": OLD_ACTIONS.get(row.action, row.action),
                "c": row.chunk_id,
                "r": row.pipeline_run_id,
                "b": f"unnamed (imported from {row.imported_from})"[:256],
                "i": row.id,
            },
        )
    with op.batch_alter_table("human_decisions") as batch:
        batch.alter_column("decision_uuid", nullable=False, existing_type=sa.String(36))
        batch.alter_column("decided_by", nullable=False, existing_type=sa.String(256))
        batch.create_unique_constraint("uq_human_decision_uuid", ["decision_uuid"])
        batch.drop_index("ix_human_decisions_decision_id")
        batch.create_index("ix_human_decisions_row", ["decision_row_id", "undone_at"])
        batch.create_index("ix_human_decisions_by", ["decided_by", "decided_at"])


def downgrade() -> None:
    raise NotImplementedError("0004 is not reversible: HumanDecisions carry more than before")
