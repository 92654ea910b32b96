"""`librarian queue load`: fill the database's knowledge_queue table, as upstream does."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from librarian.cli.common import database, home_of, out, redacted
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

    if not file.is_file():
        raise UsageError(f"{file} does not exist")
    url = database(db, home_of(home), create=True)
    with file.open(encoding="utf-8-sig") as handle:
        rows = list(json_objects(handle))
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
