"""Alembic environment: run by `store.db.upgrade` with a live connection, never by URL."""

from __future__ import annotations

from alembic import context

from librarian.store.tables import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata)
with context.begin_transaction():
    context.run_migrations()
