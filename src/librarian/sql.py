"""SQLAlchemy helpers both database users share: the store and the pgvector retriever."""

from __future__ import annotations

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from librarian.errors import RunError


class StoreError(RunError):
    """The database refused, or cannot be reached; the message says which and why."""


def is_postgres(engine: Engine | Connection) -> bool:
    return engine.dialect.name == "postgresql"


def reason(exc: SQLAlchemyError) -> str:
    """The driver's own first line (`database is locked`, `could not extend file`...)."""
    original = getattr(exc, "orig", None)
    return str(original or exc).strip().splitlines()[0]
