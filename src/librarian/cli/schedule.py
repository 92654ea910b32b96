"""`librarian serve` and `librarian deploy`: the linking flow on a schedule."""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path
from typing import Any

from librarian.cli.common import database, err, home_of, linker_settings, out
from librarian.cli.options import (
    LinkerOptions,
    PoolOpt,
    ScheduleOptions,
    with_linker_options,
    with_schedule_options,
)
from librarian.cli.run import check_input
from librarian.errors import RunError, UsageError
from librarian.flows.launch import prefect_environment
from librarian.settings import LinkerSettings


def _absolute(settings: LinkerSettings) -> dict[str, Any]:
    """Settings as a deployment carries them: JSON values, absolute paths."""
    values = settings.model_dump(mode="python")
    for key, value in values.items():
        if isinstance(value, Path):
            values[key] = str(value.resolve())
        elif isinstance(value, tuple):
            values[key] = [str(v.resolve()) if isinstance(v, Path) else v for v in value]
    return values


def checked_settings(linker: LinkerOptions, batch_size: int) -> LinkerSettings:
    """The settings each scheduled run will use, refused now if they cannot serve one."""
    from librarian.factory import check

    settings = linker_settings(linker, batch_size=batch_size)
    check(settings)
    return settings


def _secret_kept_here(url: str) -> str:
    """The deployment carries the URL's reference (Prefect stores parameters in clear);
    the runs this process starts (`serve`) find the password in LIBRARIAN_DB, as a
    worker's runs (`deploy`) must."""
    from librarian.store.db import DATABASE_ENV, reference

    ref = reference(url)
    if ref != url:
        os.environ[DATABASE_ENV] = url
        err.print(
            f"the deployment names the database as {ref}: its password is not stored on the "
            f"Prefect server; a worker running it needs {DATABASE_ENV} set to the full URL",
            markup=False,
        )
    return ref


def persistent_server(command: str) -> None:
    """Schedules live on a persistent Prefect server: refuse, saying how to get one."""
    if not os.environ.get("PREFECT_API_URL"):
        raise UsageError(
            f"{command} needs a persistent Prefect server (Prefect schedules nothing on its "
            "temporary one): start one with `librarian server start`, then export the "
            "PREFECT_API_URL it prints"
        )


def check_cron(cron: str) -> None:
    """A schedule Prefect cannot read is a usage error now, not a traceback later."""
    from prefect.client.schemas.schedules import CronSchedule

    try:
        CronSchedule(cron=cron, timezone="UTC")
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise UsageError(f"--cron {cron!r} is not a cron schedule (e.g. '0 2 * * *')") from exc


def scheduled_parameters(
    schedule: ScheduleOptions, settings: LinkerSettings, linker: LinkerOptions
) -> dict[str, Any]:
    """Parameters of the deployable flow, checked now rather than at 2 a.m."""
    check_cron(schedule.cron)
    check_input(schedule.input, schedule.from_db)
    db = None
    if schedule.from_db or schedule.commit:
        db = database(linker.db, home_of(linker.home), create=not schedule.from_db)
    return {
        "input_path": str(schedule.input.resolve()) if schedule.input is not None else None,
        "out_root": str(schedule.out_root.resolve()),
        "database": _secret_kept_here(db) if db is not None else None,
        "options": _absolute(settings),
    }


@with_schedule_options
@with_linker_options
def serve(*, schedule: ScheduleOptions, linker: LinkerOptions) -> None:
    """Keep a scheduled deployment of the flow and run it here (Prefect `flow.serve`).

    Runs until stopped (Ctrl-C). The schedule is registered on the Prefect server at
    PREFECT_API_URL (`librarian server start` runs one): Prefect schedules nothing on its
    temporary server.
    """
    check_cron(schedule.cron)  # the cheapest checks first: before any model is looked for
    settings = checked_settings(linker, schedule.batch_size)
    parameters = scheduled_parameters(schedule, settings, linker)
    persistent_server("serve")
    prefect_environment()
    from librarian.flows.scheduled import scheduled_run

    api = os.environ["PREFECT_API_URL"]
    err.print(
        f"serving deployment {schedule.name!r} on {schedule.cron} against {api}", markup=False
    )
    scheduled_run.serve(
        name=schedule.name, cron=schedule.cron, parameters=parameters, print_starting_message=False
    )


@with_schedule_options
@with_linker_options
def deploy(
    pool: PoolOpt = "librarian",
    *,
    schedule: ScheduleOptions,
    linker: LinkerOptions,
) -> None:
    """Register the scheduled deployment on the Prefect server at PREFECT_API_URL.

    A worker runs it: `prefect worker start --pool POOL` on a machine with librarian
    installed."""
    check_cron(schedule.cron)
    settings = checked_settings(linker, schedule.batch_size)
    parameters = scheduled_parameters(schedule, settings, linker)
    persistent_server("deploy")
    prefect_environment()
    deployment_id = _register(schedule.name, pool, schedule.cron, parameters)
    from librarian.flows.scheduled import scheduled_run

    out.print(
        f"deployment {scheduled_run.name}/{schedule.name} ({deployment_id}) on {schedule.cron} "
        f"in pool {pool!r}; run a worker: prefect worker start --pool {pool}",
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
        name=name,
        work_pool_name=pool,
        cron=cron,
        parameters=parameters,
        build=False,
        push=False,
        print_next_steps=False,
    )
