"""The linking flow: where work runs, nothing more. The runner (`pipeline/run.py`) runs
the stages; this module hands it Prefect tasks for the model steps (prepare, complete: on
the task runner, a Dask worker say, `in_flight` at once), the sinks (files; the database
in commit mode), the store (prior decisions and source history, given a database) and the
progress bar. A Prefect task per model step (Prefect costs ~30 ms a task).

Dry-run writes files only (and, given a database, reads prior decisions from it for update
detection). Commit mode stores each batch's decisions in one transaction; from the queue
table, that transaction also stamps the rows consumed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE
from prefect.futures import PrefectFuture
from sqlalchemy import Engine

from librarian.factory import pipeline_for
from librarian.flows.progress import ReportedProgress, phase
from librarian.pipeline.accounting import add_timings, close_out, summary_markdown
from librarian.pipeline.batches import Prepared, ReviewedRow
from librarian.pipeline.dedup import ChunkRegistry
from librarian.pipeline.envelopes import RunContext
from librarian.pipeline.pipeline import Pipeline
from librarian.pipeline.run import Pending, RunParts, Sink, run_source
from librarian.pipeline.sinks import FileSink
from librarian.pipeline.source_level import Linked
from librarian.pipeline.sources import Source, file_source
from librarian.pipeline.spill import DiskSpill
from librarian.pipeline.summary import describe_pipeline, new_summary
from librarian.schemas.records import BatchResult, History, PriorDecision, RunSummary, Section
from librarian.settings import LinkerSettings
from librarian.store.db import make_engine, redacted, resolve
from librarian.store.policies import store_policy
from librarian.store.sink import DatabaseSink, DatabaseStore
from librarian.store.source import QueueTable

T = TypeVar("T")


@task(name="load-models", cache_policy=NONE)
def load_pipeline(settings: LinkerSettings) -> Pipeline:
    return pipeline_for(settings)


class Parcel(Generic[T]):
    """A task's parameter or result, opaque to Prefect. Prefect walks every parameter of a
    task, element by element, looking for futures (`visit_collection`, on the flow's side
    and again on the worker's): a batch of prepared rows is tens of thousands of objects,
    and on Dask that walk cost a worker as much as the model (py-spy, a 100,000-row run).
    An object of a plain class is not walked. (`quote` is walked neither, but reaches a Dask
    worker still wrapped.)"""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value

    def __reduce__(self) -> tuple[type[Parcel[T]], tuple[T]]:
        return (Parcel, (self.value,))


@task(name="prepare-batch", cache_policy=NONE)
def prepare_batch(
    settings: LinkerSettings,
    sections: Parcel[list[Section]],
    ctx: RunContext,
    priors: Parcel[dict[str, PriorDecision] | None],
) -> Parcel[Prepared]:
    """C.2-C.4, wherever the task runner puts it, on that process's models."""
    return Parcel(pipeline_for(settings).prepare(sections.value, ctx, priors.value))


@task(name="complete-batch", cache_policy=NONE)
def complete_batch(
    settings: LinkerSettings, prepared: Parcel[Prepared], linked: Parcel[list[Linked]]
) -> Parcel[BatchResult]:
    """C.6-C.10 of a prepared batch, with what C.5 made of its rows."""
    return Parcel(pipeline_for(settings).complete(prepared.value, linked.value))


@task(name="embed-reviewed", cache_policy=NONE)
def embed_reviewed(
    settings: LinkerSettings, source: str, history: Parcel[History]
) -> Parcel[list[ReviewedRow]]:
    """C.5's model work for one source: its reviewed items embedded and retrieved."""
    return Parcel(pipeline_for(settings).reviewed_rows([source], history.value))


@dataclass(frozen=True)
class Unwrapped(Generic[T]):
    """A task's future, its result out of its parcel."""

    future: PrefectFuture[Parcel[T]]

    def result(self) -> T:
        return self.future.result().value


class PrefectTasks:
    """The runner's executor: each model step a Prefect task on the flow's task runner,
    its batch in a `Parcel`."""

    def __init__(self, settings: LinkerSettings) -> None:
        self.settings = settings

    def prepare(
        self, sections: list[Section], ctx: RunContext, priors: dict[str, PriorDecision] | None
    ) -> Pending[Prepared]:
        submitted = prepare_batch.submit(self.settings, Parcel(sections), ctx, Parcel(priors))
        return Unwrapped(submitted)

    def complete(self, prepared: Prepared, linked: list[Linked]) -> Pending[BatchResult]:
        return Unwrapped(complete_batch.submit(self.settings, Parcel(prepared), Parcel(linked)))

    def reviewed(self, source: str, history: History) -> Pending[list[ReviewedRow]]:
        return Unwrapped(embed_reviewed.submit(self.settings, source, Parcel(history)))


def link_all(
    source: Source,
    pipeline: Pipeline,
    settings: LinkerSettings,
    summary: RunSummary,
    files: FileSink,
    engine: Engine | None,
    stored_in: DatabaseSink | None,
    in_flight: int,
) -> None:
    """The runner over `source`, its model steps Prefect tasks; its spill on disk."""
    run_id = summary.run_id
    sinks: list[Sink] = [stored_in, files] if stored_in is not None else [files]
    store = DatabaseStore(engine, pipeline.models_digest) if engine is not None else None
    spill = DiskSpill()
    try:
        parts = RunParts(
            PrefectTasks(settings),
            sinks,
            store,
            ReportedProgress(run_id),
            spill,
            in_flight,
            ChunkRegistry(spill.mapping("seen"), spill.mapping("spans")),
            get_run_logger().info,
        )
        phase(run_id, "linking")
        skip = stored_in.failed_ids if stored_in is not None else set()
        batches = source.batches(settings.batch_size, skip)
        run_source(pipeline, batches, pipeline.context(run_id), summary, parts)
        phase(run_id, "writing")
    finally:
        spill.close()


# A source the command line has read already (a plain input, parsed), by run id: it is no
# flow parameter (Prefect stores parameters through its API), and read twice it would be.
_GIVEN: dict[str, Source] = {}


def give_source(run_id: str, source: Source) -> None:
    _GIVEN[run_id] = source


def source_of(
    run_id: str, input_path: Path | None, document: str | None, engine: Engine | None
) -> Source:
    given = _GIVEN.pop(run_id, None)
    if given is not None:
        return given
    if input_path is not None:
        return file_source(input_path, document)
    assert engine is not None, "draining the queue table needs a database"
    return QueueTable(engine)


@flow(name="librarian-link", validate_parameters=False)
def link_queue(
    input_path: Path | None,
    out_dir: Path,
    settings: LinkerSettings,
    run_id: str,
    database: str | None = None,
    in_flight: int = 1,
    source_name: str | None = None,
    commit: bool | None = None,
) -> RunSummary:
    """`input_path` None: drain the database's knowledge_queue (commit mode). A plain input
    (any shape of `pipeline.shapes`) is read as rows of the document `source_name` (default:
    the file's name). `commit` (default: whenever `database` is given): store decisions
    in `database` (a `store.db.reference`: Prefect keeps parameters, never pass a password);
    a dry run given `database` only reads prior decisions from it. `in_flight` batches are
    linked at once (on Dask, one or two a worker), stored and written in input order.
    """
    commit = database is not None if commit is None else commit
    # The caller migrates the database once (`librarian run`: before any model loads;
    # a scheduled run: `scheduled_run`).
    engine = make_engine(resolve(database)) if database else None
    source = source_of(run_id, input_path, source_name, engine)
    shown = redacted(database) if database else None
    summary = new_summary(
        source.name, out_dir, settings, run_id, "commit" if commit else "dry-run", shown
    )
    started = time.perf_counter()
    phase(run_id, "loading models")
    pipeline = load_pipeline(settings)
    add_timings(summary, {"load_models": time.perf_counter() - started})
    describe_pipeline(summary, pipeline, priors_read=engine is not None)
    stored_in = None
    if commit and engine is not None:
        stored_in = DatabaseSink(engine, run_id, source.name, pipeline.models_digest)
        store_policy(engine, run_id, pipeline.source_level.policy)
    try:
        names = {node.cre_id: node.name for node in pipeline.hub.nodes}
        with FileSink(out_dir, names) as files:
            summary.outputs = files.paths()
            link_all(source, pipeline, settings, summary, files, engine, stored_in, in_flight)
            close_out(summary, stored_in.counts() if stored_in is not None else None)
            files.commit(summary)
    finally:
        if engine is not None:
            engine.dispose()
    create_markdown_artifact(
        summary_markdown(summary),
        key="librarian-run-summary",
        description=f"librarian run {run_id}: counts, timings, models, where the outputs went",
    )
    s = summary
    get_run_logger().info(
        f"run {run_id}: read {s.read}, linked {s.linked}, review {s.review}, rejected "
        f"{s.rejected}, skipped {s.skipped} -> {out_dir}"
    )
    return summary
