"""Engines and migrations. `LIBRARIAN_DB` or `--db` picks the database; SQLite by default."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

DEFAULT_DB_URL = "sqlite:///librarian.db"
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# How long a SQLite writer waits for another's lock before the batch fails (seconds).
SQLITE_LOCK_TIMEOUT_S = 10.0


class StoreError(RuntimeError):
    """The database refused, or cannot be reached; the message says which and why."""


def database_url(explicit: str | None) -> str:
    return explicit or os.environ.get("LIBRARIAN_DB") or DEFAULT_DB_URL


def is_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


def make_engine(url: str, lock_timeout_s: float | None = None) -> Engine:
    if lock_timeout_s is None:
        lock_timeout_s = float(os.environ.get("LIBRARIAN_SQLITE_TIMEOUT_S", SQLITE_LOCK_TIMEOUT_S))
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"--db {url!r} is not a database URL") from exc
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")  # psycopg 3 is what ships
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(f"--db {url!r}: only sqlite:/// and postgresql+psycopg:// are supported")
    try:
        if parsed.get_backend_name() == "sqlite":
            engine = create_engine(parsed, connect_args={"timeout": lock_timeout_s})
            event.listen(engine, "connect", _sqlite_pragmas)
            return engine
        return create_engine(parsed, pool_pre_ping=True)
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot open database {url!r}: {exc}") from exc


def _sqlite_pragmas(dbapi_connection: object, _record: object) -> None:
    cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]
    # WAL: readers never block the writer; one writer at a time, said plainly in the README.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def upgrade(engine: Engine) -> None:
    """Bring the schema to the newest migration (idempotent)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
    except SQLAlchemyError as exc:
        raise StoreError(
            f"cannot migrate database {redacted(str(engine.url))}: {reason(exc)}"
        ) from exc


def redacted(url: str) -> str:
    """The URL without its password, for logs and summaries."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparseable database URL>"


def reason(exc: SQLAlchemyError) -> str:
    """The driver's own first line (`database is locked`, `could not extend file`...)."""
    original = getattr(exc, "orig", None)
    return str(original or exc).strip().splitlines()[0]
