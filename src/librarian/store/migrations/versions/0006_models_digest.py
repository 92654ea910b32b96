"""decision_queue.models_digest: which models decided each row; plain documents' keys

An open review item decided by models since retrained is decided again by the next run
that reads it (decided ones are left alone). Rows stored before this revision have none:
they count as decided by other models. And a plain input's rows get their document as
their source key (`plain:NAME`): every CSV and Markdown file shared the key `url:`.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


PLAIN_URN = "urn:librarian:plain:"  # as written at this revision


def upgrade() -> None:
    with op.batch_alter_table("decision_queue") as batch:
        batch.add_column(sa.Column("models_digest", sa.String(64), nullable=True))
    table = sa.table(
        "decision_queue",
        sa.column("id", sa.Integer),
        sa.column("artifact_id", sa.String),
        sa.column("envelope", sa.JSON),
        sa.column("source_key", sa.String),
    )
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(table.c.id, table.c.artifact_id, table.c.envelope).where(
            table.c.source_key == "url:"
        )
    ).all()
    for row_id, artifact_id, envelope in rows:
        source = ((envelope or {}).get("knowledge") or {}).get("source") or {}
        if str(source.get("url") or "").startswith(PLAIN_URN):
            bind.execute(table.update().where(table.c.id == row_id).values(source_key=artifact_id))


def downgrade() -> None:
    with op.batch_alter_table("decision_queue") as batch:
        batch.drop_column("models_digest")
