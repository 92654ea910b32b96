"""The deployable entry flow: JSON-friendly parameters, a fresh run id each time.

`link_queue` takes a typed job, which a deployment cannot carry; scheduled runs
(`librarian serve`, `librarian deploy`) call this flow, which builds them and runs
`link_queue` as a subflow, writing under `out_root/<run id>/`.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prefect import flow

from librarian.flows.link_flow import link_queue
from librarian.job import LinkJob
from librarian.settings import LinkerSettings
from librarian.store.db import make_engine, resolve, upgrade

DEPLOYED_FLOW = "librarian-scheduled"
ENTRYPOINT = "librarian/flows/scheduled.py:scheduled_run"


def source_root() -> Path:
    """The directory holding the installed `librarian` package: a deployment's source."""
    return Path(__file__).resolve().parents[2]


def migrate(database: str) -> None:
    engine = make_engine(resolve(database))
    try:
        upgrade(engine)
    finally:
        engine.dispose()


@flow(name=DEPLOYED_FLOW)
def scheduled_run(
    input_path: str | None = None,
    out_root: str = "out",
    database: str | None = None,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One scheduled run: INPUT (dry-run unless `database`), or the queue table when
    `input_path` is None. `options` are `LinkerSettings` fields (threshold, top_k, ...)."""
    if input_path is None and database is None:
        raise ValueError("a scheduled run needs input_path or a database to drain")
    settings = LinkerSettings(**(options or {}))
    if database is not None:
        migrate(database)
    run_id = f"run-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"
    where = Path(input_path) if input_path else None
    job = LinkJob(where, Path(out_root) / run_id, settings, run_id, database=database)
    summary = link_queue(job).value
    return summary.model_dump(mode="json")
