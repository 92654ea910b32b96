"""`librarian queue load`: fill the database's knowledge_queue table, as upstream does."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from librarian.cli.common import database, engine_of, err, home_of, out, readable_input, redacted
from librarian.cli.options import DbOpt, EveryDeadOpt, HomeOpt
from librarian.errors import RunError, UsageError
from librarian.schemas.records import RejectCode, Rejection, rejected
from librarian.text import visible

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

T = TypeVar("T")

app = typer.Typer(no_args_is_help=True, help="The database's knowledge_queue table.")


# `queue load` exit status when some lines were loaded and others rejected (each named).
PARTLY_LOADED = 3
SHOWN_REJECTIONS = 20
# A row id either database can hold (a signed 64-bit integer).
MAX_ROW_ID = 2**63 - 1


@app.command("load")
def queue_load(
    file: Annotated[
        Path, typer.Argument(help="queue rows or KnowledgeItems, one JSON object a line")
    ],
    db: DbOpt = None,
    home: HomeOpt = None,
) -> None:
    """Append queue rows to the database's knowledge_queue, as the upstream filter does.

    KnowledgeItem lines are converted to queue rows. A line that is neither, or whose
    values the table cannot hold, is rejected with its reason (kept in the rejections
    table) and the others are loaded: exit 3 says some lines were rejected."""
    from librarian.store.loading import load

    readable_input(file, "queue file")
    url = database(db, home_of(home), create=True)
    rows, refused, raw = _read_queue_file(file)
    run_id = f"queue-load-{datetime.now(UTC):%Y%m%dT%H%M%SZ}"
    with engine_of(url) as engine:
        loaded = load(engine, rows, refused, raw, str(file), run_id)
    read = len(raw)
    out.print(
        f"read {read} lines: queued {loaded.queued} rows in {redacted(url)}, "
        f"rejected {len(loaded.rejected)}",
        markup=False,
    )
    if loaded.ignored_columns:
        out.print(
            "columns the queue table has no place for, ignored: "
            + ", ".join(loaded.ignored_columns),
            markup=False,
        )
    if loaded.rejected:
        _report_rejections(loaded.rejected, run_id)
        raise typer.Exit(PARTLY_LOADED)


def _read_queue_file(
    file: Path,
) -> tuple[list[tuple[int, dict[str, Any]]], list[Rejection], dict[int, bytes]]:
    from librarian.pipeline.ingest import queue_row_from_line

    rows: list[tuple[int, dict[str, Any]]] = []
    refused: list[Rejection] = []
    raw: dict[int, bytes] = {}
    with file.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            data = line.removeprefix(b"\xef\xbb\xbf" if number == 1 else b"").rstrip(b"\r\n")
            if not data.strip():
                continue
            raw[number] = data
            outcome = queue_row_from_line(number, data)
            if isinstance(outcome, dict):
                rows.append((number, outcome))
            elif isinstance(outcome, Rejection):
                refused.append(outcome)
            else:  # a KnowledgeItem that is not accepted: no run would link it either
                refused.append(rejected(number, RejectCode.UNKNOWN_SHAPE, outcome.message))
    return rows, refused, raw


def _report_rejections(rejections: list[Rejection], run_id: str) -> None:
    for rejection in rejections[:SHOWN_REJECTIONS]:
        err.print(f"{visible(rejection.message)} [{rejection.reason}]", markup=False)
    more = len(rejections) - SHOWN_REJECTIONS
    if more > 0:
        err.print(f"... and {more} more", markup=False)
    err.print(
        f"the rejected lines are kept, with their reasons, in the rejections table (run "
        f"{run_id}); fix them and load those lines again",
        markup=False,
    )


@app.command("status")
def queue_status(db: DbOpt = None, home: HomeOpt = None) -> None:
    """Every row of the table (waiting, consumed, those no run takes), and the dead
    letters: rows that errored on every attempt, with why."""
    from librarian.store.queue import MAX_ATTEMPTS, dead_letters, queue_counts

    url = database(db, home_of(home), create=False, reads_only=True)
    with engine_of(url) as engine:
        counts, dead = queue_counts(engine), dead_letters(engine)
    out.print(f"{redacted(url)}", markup=False)
    out.print(
        f"  knowledge_queue (rows a run links): {counts.total} rows: {counts.waiting} rows "
        f"waiting, {counts.consumed} consumed, {len(dead)} dead letters",
        markup=False,
    )
    if counts.not_ours:
        labels = ", ".join(f"{n} {label}" for label, n in sorted(counts.not_ours.items()))
        out.print(
            f"  not linked by any run (llm_label not KNOWLEDGE or UNCERTAIN): {labels}",
            markup=False,
        )
    for letter in dead:
        out.print(
            f"  queue row {letter.queue_row_id}: {letter.attempts}/{MAX_ATTEMPTS} attempts, "
            f"last {letter.updated_at:%Y-%m-%d %H:%M}: {visible(letter.last_error)}",
            markup=False,
        )
    _sources_status(url)


def _sources_status(url: str) -> None:
    """Per source: its reviewers' progress towards its own calibration."""
    from sqlalchemy.orm import Session

    from librarian.store.progress import source_progress
    from librarian.store.review import items_by_id

    with engine_of(url) as engine, Session(engine) as session:
        sources = source_progress(session)
        # The sample by what it is, not by review id (ids are for machines).
        names = {
            p.key: [i.label for i in items_by_id(session, list(p.review_first[:5]))]
            for p in sources
        }
    _status_line(url)
    open_items = sum(p.open_items for p in sources)
    decided = sum(p.decisions for p in sources)
    out.print(
        f"  review items (what runs sent to people): {open_items} open; {decided} decided one "
        "by one in the sources below (what calibration reads; bulk approvals not counted)",
        markup=False,
    )
    for p in sources:
        needs = (
            f"{p.needed} more before it calibrates on its own"
            if p.needed
            else "its own calibration"
        )
        out.print(
            visible(
                f"source {p.key}: {p.open_items} open, {p.decisions} decided one by one, {needs}"
                + (f"; {p.cut}" if p.cut else f"; linked: {p.linked}" if p.linked else "")
                + (f"; {p.certified}" if p.certified else "")
                + f"; {p.expect()}"
                + (
                    (
                        "; start with: "
                        if p.small
                        else f"; review first, its calibration sample: "
                        f"{_these(len(p.review_first))} how much of this standard can be "
                        "linked automatically: "
                    )
                    + "; ".join(f"“{label}”" for label in names.get(p.key, ())[:5])
                    + (" …" if len(p.review_first) > 5 else "")
                    if p.review_first
                    else ""
                )
            ),
            markup=False,
        )


def _read(url: str, work: Callable[[Session], T]) -> T:
    """`work` over a session of the database at `url` (its engine disposed after)."""
    from sqlalchemy.orm import Session

    with engine_of(url) as engine, Session(engine) as session:
        return work(session)


def _status_line(url: str) -> None:
    """How many stored sections have each of OpenCRE's statuses."""
    from librarian.store.status import status_counts
    from librarian.store.versions import decided_but_gone

    by_status = _read(url, status_counts)
    out.print(
        "  sections by status (OpenCRE's names; WITHDRAWN ours): "
        + ", ".join(f"{name} {n}" for name, n in by_status.items()),
        markup=False,
    )
    if gone := _read(url, decided_but_gone):
        out.print(
            f"  {gone} decided sections no longer in their document (kept, marked, left out "
            "of the OpenCRE export)",
            markup=False,
        )


@app.command("check")
def queue_check(db: DbOpt = None, home: HomeOpt = None) -> None:
    """Check what must never be: an item with two standing decisions, or a standing decision
    on an open item. Exits 1 naming each; prints "consistent" otherwise."""
    from librarian.store.human import violations

    url = database(db, home_of(home), create=False, reads_only=True)
    found = _read(url, violations)
    for line in found:
        out.print(visible(f"inconsistent: {line}"), markup=False)
    if found:
        raise RunError(f"{len(found)} inconsistencies in {redacted(url)}")
    out.print(
        f"{redacted(url)}: consistent (one standing decision an item at most, none open)",
        markup=False,
    )


@app.command("migrate")
def queue_migrate(db: DbOpt = None, home: HomeOpt = None) -> None:
    """Bring the database's schema to this build's (commands that only read never do)."""
    url = database(db, home_of(home), create=False)
    out.print(f"{redacted(url)}: schema current", markup=False)


@app.command("retry")
def queue_retry(
    queue_id: Annotated[
        int | None,
        typer.Argument(
            help="the dead letter's queue row id (queue status lists them)",
            min=1,
            max=MAX_ROW_ID,
        ),
    ] = None,
    every: EveryDeadOpt = False,
    db: DbOpt = None,
    home: HomeOpt = None,
) -> None:
    """Give dead letters another MAX_ATTEMPTS tries: the next run that drains the queue
    takes them again (fix what made them fail first: `queue status` says why)."""
    from librarian.store.queue import retry

    if (queue_id is None) == (not every):
        raise UsageError("give a dead letter's queue row id, or --all")
    url = database(db, home_of(home), create=False)
    with engine_of(url) as engine:
        count = retry(engine, None if every else [queue_id] if queue_id is not None else [])
    if queue_id is not None and count == 0:
        raise UsageError(f"queue row {queue_id} is not a dead letter (`queue status` lists them)")
    out.print(f"{count} dead letters back in the queue of {redacted(url)}", markup=False)


def _these(n: int) -> str:
    return "this one decides" if n == 1 else f"these {n} decide"
