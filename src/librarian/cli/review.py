"""`librarian review export` and `review import`: the reviewers' queue as sheets."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from librarian.cli.common import database, err, home_of, out
from librarian.cli.options import DbOpt, ExportFormat, HomeOpt, HubOpt, ItemStatus
from librarian.errors import RunError
from librarian.paths import DEFAULT_HUB

app = typer.Typer(no_args_is_help=True, help="The reviewers' queue.")


@app.command("export")
def review_export(
    db: DbOpt = None,
    fmt: Annotated[ExportFormat, typer.Option("--format", help="sheet format")] = "csv",
    out_file: Annotated[Path | None, typer.Option("--out", help="default: stdout")] = None,
    status: Annotated[ItemStatus, typer.Option(help="which items")] = "open",
    since: Annotated[
        datetime | None, typer.Option(help="only items created at or after this time (UTC)")
    ] = None,
    home: HomeOpt = None,
) -> None:
    """Export the reviewers' queue, oldest first."""
    from sqlalchemy.orm import Session

    from librarian.review.sheets import to_csv, to_html, to_jsonl
    from librarian.store.db import make_engine
    from librarian.store.review import review_items

    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    engine = make_engine(database(db, home_of(home), create=False))
    try:
        with Session(engine) as session:
            items = review_items(session, status, since)
    finally:
        engine.dispose()
    text = to_csv(items) if fmt == "csv" else to_jsonl(items) if fmt == "jsonl" else to_html(items)
    if out_file is None:
        sys.stdout.write(text)
        return
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(text, encoding="utf-8")
    err.print(f"{len(items)} review items -> {out_file}", markup=False)


@app.command("import")
def review_import(
    sheet: Annotated[Path, typer.Argument(help="a filled export (.csv or .jsonl)")],
    db: DbOpt = None,
    hub: HubOpt = None,
    home: HomeOpt = None,
) -> None:
    """Record reviewers' decisions: accept a suggestion, choose another CRE, or reject.

    Every row is checked first; any bad row refuses the whole sheet (exit 1), naming it.
    """
    from librarian.catalogue.hub import load_hub
    from librarian.review.sheets import read_sheet
    from librarian.store.db import make_engine
    from librarian.store.review import apply_sheet

    rows = read_sheet(sheet)
    hub_ids = set(load_hub(hub or DEFAULT_HUB).ids)
    engine = make_engine(database(db, home_of(home), create=False))
    try:
        result = apply_sheet(engine, rows, hub_ids, str(sheet))
    finally:
        engine.dispose()
    if result.errors:
        for problem in result.errors[:20]:
            err.print(f"error: {sheet} {problem}", markup=False)
        if len(result.errors) > 20:
            err.print(f"... and {len(result.errors) - 20} more", markup=False)
        raise RunError("nothing was recorded")
    out.print(
        f"recorded: accepted {result.accepted}, chosen {result.chosen}, "
        f"rejected {result.rejected}; left open {result.left_open}",
        markup=False,
    )
