"""`librarian queue load`: fill the database's knowledge_queue table, as upstream does."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from librarian.cli.common import database, home_of, out, readable_input, redacted
from librarian.cli.options import DbOpt, HomeOpt
from librarian.errors import UsageError

app = typer.Typer(no_args_is_help=True, help="The database's knowledge_queue table.")


@app.command("load")
def queue_load(
    file: Annotated[Path, typer.Argument(help="queue rows, one JSON object a line")],
    db: DbOpt = None,
    home: HomeOpt = None,
) -> None:
    """Append queue rows to the database's knowledge_queue, as the upstream filter does."""
    from librarian.jsonl import json_objects
    from librarian.store.db import make_engine
    from librarian.store.queue import enqueue

    readable_input(file, "queue file")
    url = database(db, home_of(home), create=True)
    try:
        with file.open(encoding="utf-8-sig") as handle:
            rows = list(json_objects(handle))
    except UnicodeDecodeError as exc:
        raise UsageError(f"queue file {file} is not UTF-8 (byte {exc.start})") from exc
    engine = make_engine(url)
    try:
        count, ignored = enqueue(engine, rows)
    finally:
        engine.dispose()
    out.print(f"queued {count} rows in {redacted(url)}", markup=False)
    if ignored:
        out.print(
            f"columns the queue table has no place for, ignored: {', '.join(ignored)}",
            markup=False,
        )


@app.command("status")
def queue_status(db: DbOpt = None, home: HomeOpt = None) -> None:
    """Rows waiting, and the dead letters: rows that errored on every attempt, with why."""
    from librarian.store.db import make_engine
    from librarian.store.queue import MAX_ATTEMPTS, dead_letters, pending

    url = database(db, home_of(home), create=False)
    engine = make_engine(url)
    try:
        waiting, dead = pending(engine), dead_letters(engine)
    finally:
        engine.dispose()
    out.print(f"{redacted(url)}: {waiting} rows waiting, {len(dead)} dead letters", markup=False)
    for letter in dead:
        out.print(
            f"  queue row {letter.queue_row_id}: {letter.attempts}/{MAX_ATTEMPTS} attempts, "
            f"last {letter.updated_at:%Y-%m-%d %H:%M}: {letter.last_error}",
            markup=False,
        )
