"""`librarian run`: the linking flow over a file or the database's queue table."""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import sys
from collections.abc import Mapping
from contextlib import ExitStack, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from librarian.cli import render
from librarian.cli.common import (
    database,
    engine_of,
    err,
    home_of,
    linker_settings,
    linker_urls,
    readable_input,
    writable_output,
)
from librarian.cli.options import (
    AllowWithdrawOpt,
    BatchOpt,
    DaskAddressOpt,
    DaskWorkersOpt,
    DocumentOpt,
    DrainOpt,
    DryRunOpt,
    InputArg,
    JsonOpt,
    LinkerOptions,
    OutOpt,
    PlanOpt,
    QuietOpt,
    RunIdOpt,
    TaskRunnerOpt,
    VerboseOpt,
    with_linker_options,
)
from librarian.errors import LibrarianError, RunError, UsageError
from librarian.flows.launch import OnDask, early_prefect_server, launch, use_dask
from librarian.pipeline.shapes import in_words
from librarian.schemas.records import RunSummary
from librarian.settings import LinkerSettings, default_of

if TYPE_CHECKING:
    from librarian.job import LinkJob
    from librarian.pipeline.pipeline import Pipeline
    from librarian.pipeline.sources import JsonlFile, PlainFile

    FileSource = JsonlFile | PlainFile

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def new_run_id() -> str:
    return f"run-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def quiet_prefect(quiet: bool, verbose: bool = False) -> None:
    """--quiet: errors only, as one line; none of Prefect's INFO lines or task tracebacks
    on stderr (a cron job mails whatever it prints). By default Prefect says only its
    warnings (its INFO lines, a line a batch and a flow's start and end, come back with
    --verbose). Set before Prefect is imported; a level set in the environment stands."""
    if quiet:
        os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "CRITICAL")
    elif not verbose:
        os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "WARNING")
    one_line_failures(verbose)


class _NoRunTracebacks(logging.Filter):
    """Drops the flow and task engines' records that carry a traceback (a run that fails
    says so in the librarian's own one line: "error: run … failed: OSError: …"; the ~38
    lines of Prefect's traceback before it come back with --verbose)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.exc_info is None and not record.exc_text


def one_line_failures(verbose: bool) -> None:
    """Without --verbose, a failed run prints one line, not Prefect's traceback too."""
    if verbose:
        return
    for name in ("prefect.flow_runs", "prefect.task_runs"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _NoRunTracebacks) for f in logger.filters):
            logger.addFilter(_NoRunTracebacks())


def check_input(input: Path | None, from_db: bool) -> None:
    if from_db and input is not None:
        raise UsageError("give INPUT or --from-db, not both")
    if input is None and not from_db:
        raise UsageError("INPUT is missing (or use --from-db)")
    if input is not None:
        from librarian.pipeline.sources import binary_shape, known_shape, mislabelled

        if input.is_file() and (why := mislabelled(input)) is not None:
            raise UsageError(why)
        readable_input(input, binary=binary_shape(input))

        if not known_shape(input):
            raise UsageError(
                f"{input}: the librarian reads {in_words()}; rename the file if it is one"
            )


@with_linker_options
def run(
    input: InputArg = None,
    out_dir: OutOpt = None,
    dry_run: DryRunOpt = True,
    from_db: DrainOpt = False,
    task_runner: TaskRunnerOpt = "default",
    dask_address: DaskAddressOpt = None,
    dask_workers: DaskWorkersOpt = 2,
    batch_size: BatchOpt = default_of("batch_size"),
    run_id: RunIdOpt = None,
    source: DocumentOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    as_json: JsonOpt = False,
    plan: PlanOpt = False,
    allow_withdraw: AllowWithdrawOpt = False,
    *,
    linker: LinkerOptions,
) -> None:
    """Run the linking flow over INPUT and write envelopes (dry-run: files, nothing changed).
    INPUT: a file of any shape listed below (one document, or the queue's rows).
    --commit stores every decision in the database (--db, LIBRARIAN_DB, else the home's);
    --from-db drains its knowledge_queue table; a dry run given --db reads its decisions."""
    quiet_prefect(quiet, verbose)
    check_input(input, from_db)
    found = input_source(input, source)
    dry_run = dry_run and not from_db
    run_id = _checked(linker, dry_run, run_id, task_runner, dask_address)
    target = output_folder(out_dir or Path("out") / run_id, input)
    db = run_database(linker, dry_run, from_db)
    settings = linker_settings(linker, batch_size=batch_size, allow_withdraw=allow_withdraw)
    urls = linker_urls(linker, db)
    server_ready = early_prefect_server(plan or task_runner != "default")
    pipeline = loaded(settings, urls, run_id, quiet or as_json)
    if plan:
        show_plan(pipeline, settings, found, target, db, dry_run, as_json)
        return
    server_ready()
    dask = OnDask(dask_address, dask_workers) if task_runner == "dask" else None
    with ExitStack() as stack:
        in_flight = 0  # this process: one batch at a time (pipeline.run.Runner.in_flight)
        if dask is not None:
            vectors = db or settings.vector_db
            in_flight = use_dask(
                stack, dask, vectors, urls, lambda line: err.print(line, markup=False)
            )
        from librarian.job import LinkJob

        job = LinkJob(input, target, settings, run_id, db, in_flight, source, commit=not dry_run)
        summary = run_flow(job, pipeline, urls, dask, found, quiet or as_json)
    if as_json:
        sys.stdout.write(summary.model_dump_json(indent=1) + "\n")
    elif not quiet:
        render.run_summary(summary, target)


def output_folder(target: Path, input: Path | None) -> Path:
    """--out, refused before anything starts where the run would have to delete what no
    run wrote: a folder that holds the input, or anything but an earlier run's files."""
    from librarian.pipeline.sinks import check_out_dir

    return check_out_dir(writable_output(target), [input] if input is not None else [], "--out")


def loaded(settings: LinkerSettings, urls: Mapping[str, str], run_id: str, quiet: bool) -> Pipeline:
    """The pipeline, checked and loaded once before Prefect starts (handed to the flow):
    what cannot serve a run is refused (exit 2) before anything else; a model that fails
    to load fails the run (exit 1)."""
    from librarian.factory import build_pipeline

    shown = err.status("loading models") if err.is_terminal and not quiet else nullcontext()
    try:
        with shown:
            return build_pipeline(settings, urls)
    except LibrarianError:
        raise
    except Exception as exc:
        raise RunError(f"run {run_id} failed: {type(exc).__name__}: {exc}") from exc


def run_database(linker: LinkerOptions, dry_run: bool, from_db: bool) -> str | None:
    """Commit mode: the database, migrated. A dry run given --db (or LIBRARIAN_DB, as
    every command reads it) reads prior decisions from it (update detection) and writes
    nothing there (SQLite opened read-only); without either it reads none."""
    if not dry_run:
        return database(linker.db, home_of(linker.home), create=not from_db)
    from librarian.store.db import DATABASE_ENV, check_current, check_database, read_only

    given = linker.db or os.environ.get(DATABASE_ENV) or None
    if given is None or linker.vector_backend != "memory":
        return None
    check_database(given, create=False)
    # A dry run never writes the database: SQLite opens it read-only (on a read-only file
    # system too, where a read-write open could not create its journal files).
    reading = read_only(given, always=True)
    check_current(reading)
    return reading


def show_plan(
    pipeline: Pipeline,
    settings: LinkerSettings,
    found: FileSource | None,
    target: Path,
    db: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """The stages the run would take, its source and sinks; no row is read."""
    from librarian.store.db import redacted

    if found is not None:
        source = {"kind": type(found).__name__, "name": found.name}
    else:
        source = {"kind": "QueueTable", "name": "knowledge_queue"}
    sinks = [{"kind": "FileSink", "name": str(target)}]
    if not dry_run and db is not None:
        sinks.append({"kind": "DatabaseSink", "name": redacted(db)})
    plan = {
        "mode": "dry-run" if dry_run else "commit",
        "source": source,
        "sinks": sinks,
        "priors": "database" if db is not None else None,
        "batch_size": settings.batch_size,
        "stages": [c.as_plan() for c in pipeline.plan(priors_read=db is not None)],
    }
    if as_json:
        sys.stdout.write(json.dumps(plan, indent=1) + "\n")
    else:
        render.plan(plan)


def _checked(
    linker: LinkerOptions, dry_run: bool, run_id: str | None, runner: str, address: str | None
) -> str:
    """The options no other check covers, refused before anything starts; the run id."""
    if run_id is not None and not _RUN_ID.fullmatch(run_id):
        raise UsageError(f"--run-id {run_id!r}: use letters, digits, '.', '_' and '-'")
    if address is not None and runner != "dask":
        raise UsageError("--dask-address needs --task-runner dask")
    return run_id or new_run_id()


def input_source(input: Path | None, document: str | None) -> FileSource | None:
    """INPUT as the run will read it, its shape known from one sniff; a plain input is
    parsed now, once (a file that cannot be read as one is refused before Prefect starts,
    and its rows give the progress bar its total)."""
    from librarian.pipeline.sources import PlainFile, file_source

    if input is None:
        return None
    found = file_source(input, document)
    if not isinstance(found, PlainFile):
        if document is not None:
            raise UsageError(
                "--source names the document of a plain input: " + in_words(queue=False)
            )
        return found
    if document is not None and not 0 < len(document.strip()) <= MAX_SOURCE_CHARS:
        raise UsageError(
            f"--source is {len(document)} characters: name the document in 1 to "
            f"{MAX_SOURCE_CHARS} (the store keeps it in every row's artifact id)"
        )
    found.rows  # noqa: B018 - parsed here, once: refused now if it cannot be read
    return found


# A document name: its rows' artifact ids (`plain:NAME`) and locators must fit the store.
MAX_SOURCE_CHARS = 200


def _pending(db: str | None) -> int | None:
    from librarian.store.queue import pending

    if db is None:
        return None
    with engine_of(db) as engine:
        return pending(engine)


def run_flow(
    run: LinkJob,
    pipeline: Pipeline,
    urls: Mapping[str, str],
    dask: OnDask | None,
    found: FileSource | None,
    quiet: bool,
) -> RunSummary:
    """The run launched (`flows.launch`), handed what this command read and loaded and the
    URLs it holds, its progress on the terminal; a failure is the run's (exit 1)."""
    from librarian.job import HandOff

    progress = _progress(found, run.database, quiet)
    silent = HandOff(found, pipeline=pipeline, urls=urls)
    hand_off = HandOff(found, progress, pipeline, urls) if progress is not None else silent
    try:
        return launch(run, hand_off, dask)
    except Exception as exc:
        raise RunError(f"run {run.run_id} failed: {type(exc).__name__}: {exc}") from exc
    finally:
        if progress is not None:
            progress.stop()


class _Bar:
    """The run's progress on the terminal: its phase (starting Prefect, loading models,
    linking with rate and time left, writing). While it shows, Prefect's console log lines
    are held back (they still reach the run's log on the Prefect server)."""

    def __init__(self, total: int | None) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("{task.description:<16}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=err,
            transient=False,
        )
        self.task = self.progress.add_task("starting Prefect", total=total, rate="")
        self.started = 0.0
        _mute_prefect_console()

    def phase(self, name: str) -> None:
        import time

        if name == "linking":
            self.started = time.perf_counter()
        self.progress.update(self.task, description=name)

    def advance(self, lines: int) -> None:
        import time

        self.progress.advance(self.task, lines)
        done = self.progress.tasks[0].completed
        elapsed = time.perf_counter() - self.started if self.started else 0.0
        rate = f"{done / elapsed:.1f} lines/s" if elapsed > 0 else ""
        self.progress.update(self.task, rate=rate)

    def start(self) -> None:
        self.progress.start()

    def stop(self) -> None:
        # Prefect's console stays at WARNING to the end: its temporary server says it is
        # stopping at exit, below the summary, otherwise.
        self.progress.stop()


def _mute_prefect_console() -> None:
    """Raise Prefect's console handlers to WARNING (the API log keeps every line)."""
    for name in ("", "prefect", "prefect.flow_runs", "prefect.task_runs"):
        for handler in logging.getLogger(name).handlers:
            if type(handler).__name__ == "PrefectConsoleHandler":
                handler.setLevel(logging.WARNING)


def _progress(found: FileSource | None, db: str | None, quiet: bool) -> _Bar | None:
    """A progress bar on a terminal (not with --quiet), told by the flow what it does. Its
    total: a plain input's rows, the queue table's pending rows; a JSONL file is streamed,
    read once, so its total is not known (the bar says `?`)."""
    if quiet or not sys.stderr.isatty():
        return None
    from librarian.pipeline.sources import PlainFile

    total: int | None = None
    if isinstance(found, PlainFile):
        total = len(found.rows.lines)
    elif found is None:
        total = _pending(db)
    bar = _Bar(total)
    bar.start()
    return bar
