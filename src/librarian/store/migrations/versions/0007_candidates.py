"""decision_queue.candidates: what C.5 needs of a stored item (its candidates' CRE ids,
retrieval scores and linked-section evidence), so that a source whose rows arrive over
many queue claims is linked as a whole with its earlier items, as a file is.

Rows stored before this revision have none: they are left out of that context.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("decision_queue") as batch:
        batch.add_column(sa.Column("candidates", sa.JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("decision_queue") as batch:
        batch.drop_column("candidates")
