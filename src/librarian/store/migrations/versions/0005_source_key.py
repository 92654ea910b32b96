"""decision_queue.source_key: the standard each decided section belongs to

Linking a source as a whole counts the CREs a source already links as used, and adapts
the source's calibration to its reviewers' decisions: both are read by source. Rows
stored before this revision get their key from their envelope's source.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

from librarian.schemas.records import source_key_of

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("decision_queue") as batch:
        batch.add_column(sa.Column("source_key", sa.String(1024), nullable=True))
        batch.create_index("ix_decision_queue_source_key", ["source_key"])
    table = sa.table(
        "decision_queue",
        sa.column("id", sa.Integer),
        sa.column("envelope", sa.JSON),
        sa.column("source_key", sa.String),
    )
    bind = op.get_bind()
    rows = bind.execute(sa.select(table.c.id, table.c.envelope)).all()
    for row_id, envelope in rows:
        key = _key(envelope)
        if key is not None:
            bind.execute(table.update().where(table.c.id == row_id).values(source_key=key))


def _key(envelope: Any) -> str | None:
    data = json.loads(envelope) if isinstance(envelope, str) else envelope
    try:
        source, locator = data["knowledge"]["source"], data["knowledge"]["locator"]
        return source_key_of(
            source["type"], source.get("repo"), source.get("url") or locator.get("url")
        )
    except (KeyError, TypeError):
        return None


def downgrade() -> None:
    with op.batch_alter_table("decision_queue") as batch:
        batch.drop_index("ix_decision_queue_source_key")
        batch.drop_column("source_key")
