"""`librarian run`: the linking flow over a file or the database's queue table."""

from __future__ import annotations

import os
import re
import secrets
import sys
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from librarian.cli import render
from librarian.cli.common import (
    database,
    err,
    home_of,
    linker_settings,
    prefect_environment,
    readable_input,
    writable_output,
)
from librarian.cli.options import BatchOpt, LinkerOptions, TaskRunner, with_linker_options
from librarian.contracts.records import RunSummary
from librarian.errors import RunError, UsageError
from librarian.settings import LinkerSettings, default_of

if TYPE_CHECKING:
    from rich.progress import Progress

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def new_run_id() -> str:
    return f"run-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def check_input(input: Path | None, from_db: bool) -> None:
    if from_db and input is not None:
        raise UsageError("give INPUT or --from-db, not both")
    if input is None and not from_db:
        raise UsageError("INPUT is missing (or use --from-db)")
    if input is not None:
        readable_input(input)


@with_linker_options
def run(
    input: Annotated[
        Path | None, typer.Argument(help="knowledge-queue JSONL (omit with --from-db)")
    ] = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="default out/<run-id>/")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run/--commit", help="write files only / write the database")
    ] = True,
    from_db: Annotated[
        bool,
        typer.Option("--from-db", help="drain the database's knowledge_queue (implies --commit)"),
    ] = False,
    task_runner: Annotated[
        TaskRunner,
        typer.Option("--task-runner", help="this process, or batches over Dask workers"),
    ] = "default",
    dask_address: Annotated[
        str | None,
        typer.Option(help="Dask scheduler, e.g. tcp://host:8786 (default: a local cluster)"),
    ] = None,
    dask_workers: Annotated[
        int, typer.Option(min=1, help="workers of the local Dask cluster (processes)")
    ] = 2,
    batch_size: BatchOpt = default_of("batch_size"),
    run_id: Annotated[str | None, typer.Option(help="default run-<utc time>-<random>")] = None,
    *,
    linker: LinkerOptions,
) -> None:
    """Run the linking flow over INPUT and write envelopes (dry-run: files, nothing changed).

    --commit stores every decision in the database (--db, LIBRARIAN_DB, default librarian.db
    in the home); --from-db drains its knowledge_queue table instead of a file.
    """
    check_input(input, from_db)
    dry_run = dry_run and not from_db
    if dry_run and linker.db is not None and linker.vector_backend == "memory":
        raise UsageError("--db needs --commit or --from-db: a dry run never touches the database")
    if run_id is not None and not _RUN_ID.fullmatch(run_id):
        raise UsageError(f"--run-id {run_id!r}: use letters, digits, '.', '_' and '-'")
    run_id = run_id or new_run_id()
    target = out_dir or Path("out") / run_id
    writable_output(target)
    if dask_address is not None and task_runner != "dask":
        raise UsageError("--dask-address needs --task-runner dask")
    db = None if dry_run else database(linker.db, home_of(linker.home), create=not from_db)
    settings = linker_settings(linker, batch_size=batch_size)
    prefect_environment()
    with ExitStack() as stack:
        in_flight = 1
        dask = None
        if task_runner == "dask":
            in_flight = use_dask(stack, dask_address, dask_workers)
            dask = (dask_address, dask_workers)
        summary = run_flow(input, target, settings, run_id, db, in_flight, dask)
    render.run_summary(summary, target)


def use_dask(stack: ExitStack, address: str | None, workers: int) -> int:
    """Point the process at a real Prefect server (starting one if none is configured);
    returns how many batches to keep in flight."""
    api = os.environ.get("PREFECT_API_URL")
    if api:
        err.print(f"Dask workers report to the Prefect server at {api}", markup=False)
    else:
        from librarian.flows.server import local_prefect_server

        api = stack.enter_context(local_prefect_server())
        os.environ["PREFECT_API_URL"] = api  # before Prefect is imported; workers inherit it
        stack.callback(os.environ.pop, "PREFECT_API_URL", None)
        err.print(
            f"started a Prefect server for the Dask workers at {api} (stopped when the run ends)",
            markup=False,
        )
    where = address or f"a local cluster of {workers} worker processes"
    err.print(f"linking batches on Dask: {where}", markup=False)
    return 4 if address else 2 * workers


def _count_lines(path: Path) -> int:
    total, last = 0, b"\n"
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            total += chunk.count(b"\n")
            last = chunk[-1:]
    return total + (0 if last == b"\n" else 1)


def _pending(db: str | None) -> int | None:
    from librarian.store.db import make_engine
    from librarian.store.queue import pending

    if db is None:
        return None
    engine = make_engine(db)
    try:
        return pending(engine)
    finally:
        engine.dispose()


def run_flow(
    input: Path | None,
    target: Path,
    settings: LinkerSettings,
    run_id: str,
    db: str | None,
    in_flight: int,
    dask: tuple[str | None, int] | None,
) -> RunSummary:
    """`dask`: (scheduler address or None for a local cluster, local worker count)."""
    from librarian.flows.link_flow import link_queue, on_progress

    flow_to_run = link_queue if dask is None else link_queue.with_options(
        task_runner=_dask_runner(*dask)  # type: ignore[arg-type]
    )  # fmt: skip
    progress = _progress(input, db, run_id)
    try:
        return flow_to_run(input, target, settings, run_id, db, in_flight)
    except Exception as exc:
        raise RunError(f"run {run_id} failed: {type(exc).__name__}: {exc}") from exc
    finally:
        if progress is not None:
            progress.stop()
        on_progress(run_id, None)
        if dask is not None:
            from prefect.logging.handlers import APILogHandler

            APILogHandler().flush()  # before a server this command started is stopped


def _dask_runner(address: str | None, workers: int) -> object:
    from prefect_dask.task_runners import DaskTaskRunner

    if address:
        return DaskTaskRunner(address=address)
    local = {"n_workers": workers, "threads_per_worker": 1, "processes": True,
             "dashboard_address": None}  # fmt: skip
    return DaskTaskRunner(cluster_kwargs=local)


def _progress(input: Path | None, db: str | None, run_id: str) -> Progress | None:
    """A progress bar on a terminal, advanced by the flow as batches finish."""
    if not sys.stderr.isatty():
        return None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from librarian.flows.link_flow import on_progress

    progress = Progress("[progress.description]{task.description}", BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(), console=err)  # fmt: skip
    total = _count_lines(input) if input is not None else _pending(db)
    bar = progress.add_task("linking", total=total)
    on_progress(run_id, lambda n: progress.advance(bar, n))
    progress.start()
    return progress
