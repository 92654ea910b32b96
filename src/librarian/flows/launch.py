"""Where a run started by a command works: Prefect's environment, its server (a temporary
one booting while the models load, or one for Dask's workers), the Dask task runner and its
workers' environment, and the flow called with what the command hands it. The command says
what to run; this module, where. Prefect is imported only when a run needs it."""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from librarian.job import HandOff, LinkJob
    from librarian.schemas.records import RunSummary


def prefect_environment() -> None:
    """Prefect's settings for every command that runs a flow, set before Prefect is
    imported (a value set in the environment stands)."""
    # Nothing may try the network; a cold local Prefect server can take 15-25 s to start.
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    # One "Finished in state Completed()" line per task buries the per-batch flow log;
    # task states still reach the API. Set the variable to INFO to see them.
    os.environ.setdefault("PREFECT_LOGGING_LOGGERS_PREFECT_TASK_RUNS_LEVEL", "WARNING")


def early_prefect_server(not_needed: bool) -> Callable[[], None]:
    """Start Prefect's temporary server now (when no PREFECT_API_URL names one, and the run
    needs one: not a plan, not Dask's own), so that it boots while the models load;
    returns what waits for it before the flow is called."""
    prefect_environment()
    if not_needed or os.environ.get("PREFECT_API_URL"):
        return lambda: None
    from librarian.flows.server import TemporaryServer

    return TemporaryServer().ready


@dataclass(frozen=True)
class OnDask:
    """A run's batches on Dask: a scheduler's address (None: a local cluster of `workers`
    processes)."""

    address: str | None
    workers: int


def use_dask(
    stack: ExitStack,
    dask: OnDask,
    db: str | None,
    urls: Mapping[str, str],
    say: Callable[[str], None],
) -> int:
    """Point the process at a real Prefect server (starting one if none is configured);
    returns how many batches to keep in flight. A local cluster's workers are this
    process's children: they get a database URL's password through the environment
    (LIBRARIAN_DB), as a remote worker must, never through Prefect's stored parameters.
    Every variable set here is restored when `stack` closes."""
    from librarian.store.db import DATABASE_ENV, resolve

    if dask.address is None and db is not None:
        _set(stack, DATABASE_ENV, resolve(db, urls))
    api = os.environ.get("PREFECT_API_URL")
    if api:
        say(f"Dask workers report to the Prefect server at {api}")
    else:
        from librarian.flows.server import local_prefect_server

        api = stack.enter_context(local_prefect_server())
        _set(stack, "PREFECT_API_URL", api)  # before Prefect is imported; workers inherit it
        say(f"started a Prefect server for the Dask workers at {api} (stopped when the run ends)")
    local = f"a local cluster of {dask.workers} worker processes"
    say(f"linking batches on Dask: {dask.address or local}")
    from librarian.flows.dask import in_flight

    return in_flight(dask.address, dask.workers)


def _set(stack: ExitStack, name: str, value: str) -> None:
    before = os.environ.get(name)
    os.environ[name] = value
    stack.callback(_restore, name, before)


def _restore(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def launch(job: LinkJob, hand_off: HandOff, dask: OnDask | None) -> RunSummary:
    """The linking flow called for `job`, on Dask when `dask` says so; `hand_off` travels
    beside it (what the command read and loaded, the URLs it holds). The job's database
    leaves this process as its reference alone (no password: Prefect stores a flow's
    parameters)."""
    from librarian.flows.dask import dask_task_runner
    from librarian.flows.link_flow import Parcel, link_queue
    from librarian.store.db import reference

    flow_to_run = link_queue
    if dask is not None:
        flow_to_run = link_queue.with_options(
            task_runner=dask_task_runner(dask.address, dask.workers)
        )
    database = reference(job.database) if job.database is not None else None
    try:
        with collector_for_a_run():
            return flow_to_run(replace(job, database=database), Parcel(hand_off)).value
    finally:
        if dask is not None:
            from prefect.logging.handlers import APILogHandler

            APILogHandler().flush()  # before a server this command started is stopped


# Allocations between the cyclic collector's youngest-generation passes during a run (the
# interpreter's default is 700). A run makes some 150 short-lived objects a row and frees
# nearly all of them by reference count; at 700 the collector ran every few rows, and its
# older generations' passes walked all the run held (docs/benchmarks.md: 0.15-0.4 ms a
# row of the command).
RUN_COLLECTOR_THRESHOLD = 50_000


@contextmanager
def collector_for_a_run() -> Iterator[None]:
    """The cyclic garbage collector set for a run, and set back after: what is loaded by
    then (the models, the hub, the modules) moved out of its sight (`gc.freeze`: it lives
    as long as the process), and its youngest generation collected every
    RUN_COLLECTOR_THRESHOLD allocations."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(RUN_COLLECTOR_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
