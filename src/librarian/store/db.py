"""Engines and migrations: an explicit URL, else `LIBRARIAN_DB`, else the home's SQLite."""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from librarian.errors import UsageError
from librarian.sql import StoreError, is_postgres, reason

DATABASE_ENV = "LIBRARIAN_DB"
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# How long a SQLite writer waits for another's lock before the batch fails (seconds).
SQLITE_LOCK_TIMEOUT_S = 10.0


class DatabaseUrlError(UsageError):
    """The database URL cannot name a database the librarian can use."""


def database_url(explicit: str | None, default: str) -> str:
    """The URL to use: `explicit`, else `LIBRARIAN_DB`, else `default` (the home's SQLite)."""
    return explicit or os.environ.get(DATABASE_ENV) or default


def sqlite_file(url: str) -> Path | None:
    """The file a SQLite URL names; None for another database (or an in-memory one)."""
    parsed = _parse(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    if parsed.query.get("uri") == "true" and parsed.database.startswith("file:"):
        # `sqlite:///file:/path/x.db?mode=ro&uri=true`: SQLite's own URI, read-only here.
        return Path(unquote(urlsplit(parsed.database).path))
    return Path(parsed.database)


def check_database(url: str, create: bool) -> None:
    """Refuse, before any work, a database that cannot keep what a command does: an
    in-memory SQLite (gone when the run ends), or a SQLite file that does not exist when
    the command only reads (a misspelt path would otherwise be a new, empty database)."""
    parsed = _parse(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database in (None, "", ":memory:"):
        raise DatabaseUrlError(
            f"{redacted(url)} is an in-memory SQLite database: nothing stored there outlives "
            "the command; name a file (sqlite:////path/to/librarian.db)"
        )
    path = sqlite_file(url)
    if path is not None and not create and not path.is_file():
        raise DatabaseUrlError(
            f"database {path} does not exist (this command only reads; runs with --commit "
            "and `queue load` create one)"
        )
    if path is not None and create:
        path.parent.mkdir(parents=True, exist_ok=True)


def read_only(url: str, always: bool = False) -> str:
    """A SQLite file this user may not write, opened read-only (SQLite's `mode=ro` URI);
    one in a folder nobody may write (a read-only file system, a read-only mount), opened
    as immutable: SQLite cannot create the write-ahead log's shared-memory file there, and
    nothing can change the file underneath. `always`: a file this user may write opened
    read-only too (a command that must never write it: a dry run). Any other URL as it
    is."""
    path = sqlite_file(url)
    if path is None or _parse(url).query.get("uri") == "true":
        return url
    where = quote(str(path.resolve()))
    if not os.access(path.resolve().parent, os.W_OK):
        return f"sqlite:///file:{where}?immutable=1&uri=true"
    if always or not os.access(path, os.W_OK):
        return f"sqlite:///file:{where}?mode=ro&uri=true"
    return url


def _parse(url: str) -> URL:
    try:
        parsed = make_url(url)
        parsed.port  # noqa: B018 - a malformed IPv6 host fails here, not on first use
    except (ArgumentError, ValueError) as exc:
        raise DatabaseUrlError(f"{redacted(url)} is not a database URL") from exc
    if parsed.host and "@" in parsed.host:
        # "u:p@ss@host" parses as password "p", host "ss@host": part of the password
        # would reach logs as a host name, and the wrong server would be asked.
        raise DatabaseUrlError(
            f"{redacted(url)}: the URL has more than one '@'; percent-encode an '@' in the "
            "user name or password as %40"
        )
    return parsed


def make_engine(url: str, lock_timeout_s: float | None = None) -> Engine:
    if lock_timeout_s is None:
        lock_timeout_s = float(os.environ.get("LIBRARIAN_SQLITE_TIMEOUT_S", SQLITE_LOCK_TIMEOUT_S))
    parsed = _parse(url)
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")  # psycopg 3 is what ships
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise DatabaseUrlError(
            f"{redacted(url)}: only sqlite:/// and postgresql+psycopg:// databases are supported"
        )
    try:
        if parsed.get_backend_name() == "sqlite":
            engine = create_engine(parsed, connect_args={"timeout": lock_timeout_s})
            event.listen(engine, "connect", _sqlite_pragmas)
            return engine
        return create_engine(parsed, pool_pre_ping=True)
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot open database {redacted(url)}: {reason(exc)}") from exc


def _sqlite_pragmas(dbapi_connection: object, _record: object) -> None:
    cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]
    # WAL: readers never block the writer; one writer at a time, said plainly in the README.
    # A database opened read-only keeps the mode it has (it cannot be changed there).
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
    except sqlite3.OperationalError as exc:
        if "readonly" not in str(exc).replace(" ", "").replace("-", ""):
            raise
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
    # Another writer may have put bytes that are not UTF-8 in a TEXT column: read them as
    # lone surrogates (which ingest rejects, row by row) rather than fail every claim.
    dbapi_connection.text_factory = _lenient_text  # type: ignore[attr-defined]


def _lenient_text(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


# The PostgreSQL advisory lock migrations take (any number the database's other users do
# not use): two runs starting at once on a fresh database both created the tables, and
# one failed on a duplicate key.
MIGRATION_LOCK = 0x4C1B_0001


def upgrade(engine: Engine) -> None:
    """Bring the schema to the newest migration (idempotent). On PostgreSQL under a
    transaction-scoped advisory lock: a second migrator waits, then finds it done."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    try:
        with engine.begin() as connection:
            if is_postgres(engine):
                connection.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK}
                )
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
    except SQLAlchemyError as exc:
        raise StoreError(
            f"cannot migrate database {redacted(str(engine.url))}: {reason(exc)}"
        ) from exc


def check_current(url: str) -> None:
    """Refuse a database whose schema is older than this build's (a command that only
    reads never migrates it): say how to bring it up to date."""
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(config).get_current_head()
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            current = MigrationContext.configure(connection).get_current_revision()
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot read database {redacted(url)}: {reason(exc)}") from exc
    finally:
        engine.dispose()
    if current != head:
        raise DatabaseUrlError(
            f"database {redacted(url)} is at schema revision {current or 'none'}, this build "
            f"reads {head}: this command only reads it; migrate it first: `librarian queue "
            "migrate --db URL`"
        )


def reference(url: str) -> str:
    """What may leave this process in the URL's place (a flow parameter, a deployment's
    parameters, both stored on the Prefect server): the URL without its secrets. `resolve`
    turns it back into the URL given the URLs its caller holds (`known_urls`), or wherever
    LIBRARIAN_DB holds the URL."""
    _parse(url)
    return redacted(url)


def known_urls(*urls: str | None) -> dict[str, str]:
    """The URLs a caller holds, by their reference: what it hands, in the process, to
    whatever resolves a reference (never a parameter, never module state)."""
    return {reference(url): url for url in urls if url}


def resolve(ref: str, known: Mapping[str, str] | None = None) -> str:
    """The database URL a `reference` stands for: one of the caller's `known` URLs, else
    LIBRARIAN_DB's; a reference whose secret neither holds is refused, saying where to put
    it."""
    if known and ref in known:
        return known[ref]
    from_env = os.environ.get(DATABASE_ENV)
    if from_env and from_env != ref and redacted(from_env) == ref:
        return from_env
    if HIDDEN in ref:
        raise DatabaseUrlError(
            f"{ref}: the run was given this database without its password (secrets are "
            f"never stored on the Prefect server); set {DATABASE_ENV} to the full URL where "
            "the run executes (the worker's or the serving process's environment)"
        )
    return ref


# How `redacted` shows a secret.
HIDDEN = "***"
# Query parameters that carry secrets (libpq's `password`, `sslpassword`; drivers' others).
SECRET_PARAMETERS = frozenset(
    {"password", "passwd", "pwd", "sslpassword", "secret", "token", "api_key", "apikey"}
)


# libpq reads a `dbname` holding '=' as a whole conninfo string ("dbname=x password=y").
_CONNINFO_SECRET = re.compile(r"(?i)(?:^|\s)(?:" + "|".join(sorted(SECRET_PARAMETERS)) + r")\s*=")


def _holds_secret(value: str | tuple[str, ...]) -> bool:
    """A URL part that is a conninfo string naming a secret key."""
    values = (value,) if isinstance(value, str) else value
    return any(_CONNINFO_SECRET.search(v) for v in values)


def redacted(url: str) -> str:
    """The URL without its secrets, for logs, summaries and error messages: the password
    (SQLAlchemy's own rendering hides it) and any secret query parameter. A URL with a
    second '@' is shown without its user part at all (where its password ends is
    ambiguous)."""
    scheme = url.split("://", 1)[0] if "://" in url else "?"
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return f"<unparseable database URL, scheme {scheme[:20]!r}>"
    if parsed.host and "@" in parsed.host:
        return f"{scheme}://***@{parsed.host.rsplit('@', 1)[1]}/…"
    hidden = {
        k: HIDDEN
        for k, v in parsed.query.items()
        if k.lower() in SECRET_PARAMETERS or _holds_secret(v)
    }
    base = parsed.set(query={k: v for k, v in parsed.query.items() if k not in hidden})
    if parsed.database and _holds_secret(parsed.database):
        base = base.set(database=HIDDEN)
    shown = base.render_as_string(hide_password=True).replace("%2A%2A%2A", HIDDEN)
    if hidden:
        shown += ("&" if "?" in shown else "?") + "&".join(f"{k}=***" for k in sorted(hidden))
    return shown
