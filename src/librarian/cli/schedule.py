"""`librarian serve` and `librarian deploy`: the linking flow on a schedule."""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path
from typing import Annotated, Any

import typer

from librarian.cli.common import database, err, home_of, linker_settings, out, prefect_environment
from librarian.cli.options import BatchOpt, LinkerOptions, with_linker_options
from librarian.cli.run import check_input
from librarian.errors import RunError, UsageError
from librarian.settings import LinkerSettings, default_of

ScheduleInput = Annotated[
    Path | None, typer.Argument(help="knowledge-queue JSONL read at every run (or --from-db)")
]
CronOpt = Annotated[str, typer.Option(help="cron schedule, e.g. '0 2 * * *' (UTC)")]
NameOpt = Annotated[str, typer.Option(help="deployment name")]
OutRootOpt = Annotated[Path, typer.Option(help="each run writes OUT_ROOT/<run-id>/")]
CommitOpt = Annotated[bool, typer.Option("--commit", help="store decisions in --db")]
FromDbOpt = Annotated[bool, typer.Option("--from-db", help="drain the knowledge_queue table")]


def _absolute(settings: LinkerSettings) -> dict[str, Any]:
    """Settings as a deployment carries them: JSON values, absolute paths."""
    values = settings.model_dump(mode="python")
    for key, value in values.items():
        if isinstance(value, Path):
            values[key] = str(value.resolve())
        elif isinstance(value, tuple):
            values[key] = [str(v.resolve()) if isinstance(v, Path) else v for v in value]
        elif hasattr(value, "value"):
            values[key] = value.value
    return values


def scheduled_parameters(
    input: Path | None, from_db: bool, commit: bool, out_root: Path, settings: LinkerSettings,
    linker: LinkerOptions,
) -> dict[str, Any]:  # fmt: skip
    """Parameters of the deployable flow, checked now rather than at 2 a.m."""
    check_input(input, from_db)
    db = (
        database(linker.db, home_of(linker.home), create=not from_db)
        if (from_db or commit)
        else None
    )
    return {
        "input_path": str(input.resolve()) if input is not None else None,
        "out_root": str(out_root.resolve()),
        "database": db,
        "options": _absolute(settings),
    }


@with_linker_options
def serve(
    input: ScheduleInput = None,
    cron: CronOpt = "0 2 * * *",
    name: NameOpt = "nightly",
    out_root: OutRootOpt = Path("out"),
    commit: CommitOpt = False,
    from_db: FromDbOpt = False,
    batch_size: BatchOpt = default_of("batch_size"),
    *,
    linker: LinkerOptions,
) -> None:
    """Keep a scheduled deployment of the flow and run it here (Prefect `flow.serve`).

    Runs until stopped (Ctrl-C). With PREFECT_API_URL set the schedule is registered on
    that server; otherwise on a temporary local one that lives as long as this process.
    """
    settings = linker_settings(linker, batch_size=batch_size)
    parameters = scheduled_parameters(input, from_db, commit, out_root, settings, linker)
    prefect_environment()
    from librarian.flows.scheduled import scheduled_run

    api = os.environ.get("PREFECT_API_URL") or (
        "a temporary local Prefect server (the schedule lives with this process)"
    )
    err.print(f"serving deployment {name!r} on {cron} against {api}", markup=False)
    scheduled_run.serve(name=name, cron=cron, parameters=parameters, print_starting_message=False)


@with_linker_options
def deploy(
    input: ScheduleInput = None,
    cron: CronOpt = "0 2 * * *",
    name: NameOpt = "nightly",
    pool: Annotated[str, typer.Option(help="process work pool (created if missing)")] = (
        "librarian"
    ),
    out_root: OutRootOpt = Path("out"),
    commit: CommitOpt = False,
    from_db: FromDbOpt = False,
    batch_size: BatchOpt = default_of("batch_size"),
    *,
    linker: LinkerOptions,
) -> None:
    """Register the scheduled deployment on the Prefect server at PREFECT_API_URL.

    A worker runs it: `prefect worker start --pool POOL` on a machine with librarian
    installed."""
    if not os.environ.get("PREFECT_API_URL"):
        raise UsageError("deploy registers against a Prefect server: set PREFECT_API_URL")
    settings = linker_settings(linker, batch_size=batch_size)
    parameters = scheduled_parameters(input, from_db, commit, out_root, settings, linker)
    prefect_environment()
    deployment_id = _register(name, pool, cron, parameters)
    from librarian.flows.scheduled import scheduled_run

    out.print(
        f"deployment {scheduled_run.name}/{name} ({deployment_id}) on {cron} in pool {pool!r}; "
        f"run a worker: prefect worker start --pool {pool}",
        markup=False,
    )


def _register(name: str, pool: str, cron: str, parameters: dict[str, Any]) -> object:
    from prefect import Flow
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectAlreadyExists

    from librarian.flows.scheduled import ENTRYPOINT, scheduled_run, source_root

    with get_client(sync_client=True) as client, suppress(ObjectAlreadyExists):
        client.create_work_pool(WorkPoolCreate(name=pool, type="process"))
    deployable = scheduled_run.from_source(source=str(source_root()), entrypoint=ENTRYPOINT)
    if not isinstance(deployable, Flow):  # from_source is synchronous outside an event loop
        raise RunError("Prefect returned a coroutine where a flow was expected")
    return deployable.deploy(
        name=name, work_pool_name=pool, cron=cron, parameters=parameters,
        build=False, push=False, print_next_steps=False,
    )  # fmt: skip
