"""decision store: decision_queue, rejections, human_decisions, knowledge_queue

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    _create_decision_queue()
    _create_rejections()
    _create_human_decisions()
    _create_knowledge_queue()


def _create_decision_queue() -> None:
    op.create_table(
        "decision_queue",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("chunk_id", sa.String(512), nullable=False, index=True),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("artifact_id", sa.String(512), nullable=False, index=True),
        sa.Column("span_key", sa.String(2048), nullable=False, index=True),
        sa.Column("run_id", sa.String(128), nullable=False, index=True),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("top_cre_id", sa.String(7), index=True),
        sa.Column("confidence", sa.Float),
        sa.Column("reason_code", sa.String(64)),
        sa.Column("is_update", sa.Boolean, nullable=False),
        sa.Column("prior_chunk_id", sa.String(512)),
        sa.Column("review_id", sa.String(64), unique=True),
        sa.Column("queue_row_id", sa.Integer, index=True),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("envelope", sa.JSON, nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("review_consumed_at", TZ),
        sa.UniqueConstraint("chunk_id", "content_hash", name="uq_decision_chunk_content"),
    )
    op.create_index("ix_decision_status_created", "decision_queue", ["status", "created_at"])


def _create_rejections() -> None:
    op.create_table(
        "rejections",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(128), nullable=False, index=True),
        sa.Column("source", sa.String(1024), nullable=False),
        sa.Column("line", sa.Integer, nullable=False),
        sa.Column("chunk_id", sa.String(512)),
        sa.Column("reason", sa.String(64), nullable=False),
        sa.Column("field", sa.String(128)),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("raw", sa.Text, nullable=False),
        sa.Column("raw_sha256", sa.String(64), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.UniqueConstraint("source", "line", "raw_sha256", name="uq_rejection"),
    )


def _create_human_decisions() -> None:
    op.create_table(
        "human_decisions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("decision_id", sa.Integer, nullable=False, unique=True, index=True),
        sa.Column("review_id", sa.String(64), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("cre_id", sa.String(7)),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("source_standard", sa.String(512)),
        sa.Column("imported_from", sa.String(1024), nullable=False),
        sa.Column("decided_at", TZ, nullable=False),
    )


def _create_knowledge_queue() -> None:
    # The upstream filter may have created its queue table already; we adopt it.
    if not sa.inspect(op.get_bind()).has_table("knowledge_queue"):
        op.create_table(
            "knowledge_queue",
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("content_hash", sa.String(64)),
            sa.Column("chunk_id", sa.String(512)),
            sa.Column("artifact_id", sa.String(512)),
            sa.Column("pipeline_run_id", sa.String(128)),
            sa.Column("schema_version", sa.String(32)),
            sa.Column("source_type", sa.String(16)),
            sa.Column("source_repo", sa.String(512)),
            sa.Column("source_commit_sha", sa.String(64)),
            sa.Column("source_committed_at", TZ),
            sa.Column("feed_url", sa.String(2048)),
            sa.Column("post_guid", sa.String(2048)),
            sa.Column("locator_kind", sa.String(32)),
            sa.Column("locator_path", sa.String(2048)),
            sa.Column("span_index", sa.Integer),
            sa.Column("span_total", sa.Integer),
            sa.Column("span_heading_path", sa.Text),
            sa.Column("text", sa.Text),
            sa.Column("llm_label", sa.String(32)),
            sa.Column("confidence", sa.Float),
            sa.Column("llm_reasoning", sa.Text),
            sa.Column("created_at", TZ),
            sa.Column("consumed_at", TZ),
        )
        op.create_index(
            "ix_knowledge_queue_pending", "knowledge_queue", ["consumed_at", "created_at", "id"]
        )


def downgrade() -> None:
    op.drop_table("human_decisions")
    op.drop_table("rejections")
    op.drop_index("ix_decision_status_created", "decision_queue")
    op.drop_table("decision_queue")
