"""One error hierarchy. Library code raises these in domain terms; only the CLI turns
them into exit codes (usage and input problems 2, a run that failed 1) and names flags."""

from __future__ import annotations


class LibrarianError(Exception):
    """Every error the librarian raises on purpose; the message says what and why."""

    exit_code = 1


class UsageError(LibrarianError):
    """What was asked for cannot be done as configured (missing models, a bad option value,
    a path that is not what it should be): nothing ran."""

    exit_code = 2


class InputError(LibrarianError):
    """A file or table given to the librarian cannot be used as a whole (a hub catalogue,
    links, a golden set, a review sheet); the message names the line or row."""

    exit_code = 2


class RunError(LibrarianError):
    """The work started and failed (a model, the database, training): exit 1."""

    exit_code = 1
