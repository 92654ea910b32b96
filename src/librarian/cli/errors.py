"""The one place errors become what a user reads: a line on stderr, and an exit code."""

from __future__ import annotations

from librarian.artifacts.card import ModelDirError
from librarian.cli.common import err
from librarian.errors import LibrarianError

# What the CLI can add that library code, speaking in domain terms, does not say.
_HINTS: dict[type[LibrarianError], str] = {
    ModelDirError: "(or pass --uncalibrated to run on raw cosine scores, declared as such)",
}


def report(exc: LibrarianError) -> int:
    hint = next((h for kind, h in _HINTS.items() if isinstance(exc, kind)), "")
    message = " ".join(str(exc).split("\n")[0:1]) or type(exc).__name__
    err.print(f"error: {message}{' ' + hint if hint else ''}", markup=False)
    return exc.exit_code


def report_usage(message: str, exit_code: int) -> int:
    """A usage error the option parser found, as one line."""
    first = " ".join(message.split())
    err.print(f"error: {first} (see --help)", markup=False)
    return exit_code
