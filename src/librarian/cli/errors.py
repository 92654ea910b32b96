"""The one place errors become what a user reads: a line on stderr, and an exit code."""

from __future__ import annotations

from librarian.artifacts.card import ModelDirError
from librarian.cli.common import err
from librarian.errors import LibrarianError, RunError
from librarian.text import visible

# What the CLI can add that library code, speaking in domain terms, does not say.
_HINTS: dict[type[LibrarianError], str] = {
    ModelDirError: "(or pass --uncalibrated to run on raw cosine scores, declared as such)",
}


def report(exc: LibrarianError) -> int:
    hint = next((h for kind, h in _HINTS.items() if isinstance(exc, kind)), "")
    message = visible(" ".join(str(exc).split("\n")[0:1])) or type(exc).__name__
    err.print(f"error: {message}{' ' + hint if hint else ''}", markup=False)
    return exc.exit_code


def known_failure(exc: BaseException) -> LibrarianError | None:
    """What an error from the machine, not from the librarian, means to the user: a path
    that cannot be written, a database that refused. None: a bug, to be shown as one."""
    from sqlalchemy.exc import OperationalError, SQLAlchemyError

    from librarian.sql import StoreError, reason

    if isinstance(exc, OperationalError) and "locked" in reason(exc):
        return StoreError(
            "the database is locked by another writer (a run, the workbench): nothing was "
            "recorded; try again when it is done"
        )
    if isinstance(exc, SQLAlchemyError):
        return StoreError(f"the database refused: {reason(exc)}")
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return RunError(f"{exc.strerror}{where}")
    return None


def report_usage(message: str, exit_code: int) -> int:
    """A usage error the option parser found, as one line."""
    first = visible(" ".join(message.split()))
    err.print(f"error: {first} (see --help)", markup=False)
    return exit_code
