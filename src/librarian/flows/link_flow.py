"""The linking flow: wiring only. `for batch in source: sink.write(pipeline.process(batch))`,
a Prefect task per step (Prefect costs ~30 ms a task), `in_flight` batches linking at once.

Dry-run writes files only (and, given a database, reads prior decisions from it for update
detection). Commit mode stores each batch's decisions in one transaction; from the queue
table, that transaction also stamps the rows consumed.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar, cast

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE
from prefect.futures import PrefectFuture
from prefect.utilities.annotations import quote
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from librarian.factory import pipeline_for
from librarian.flows.progress import phase, report_lines
from librarian.pipeline.accounting import (
    add_timings,
    check_accounting,
    record_batch,
    summary_markdown,
)
from librarian.pipeline.dedup import ChunkRegistry
from librarian.pipeline.pipeline import Admitted, Pipeline
from librarian.pipeline.sinks import FileSink
from librarian.pipeline.sources import Source, file_source
from librarian.schemas.records import BatchResult, PriorDecision, RawBatch, RunSummary, Section
from librarian.settings import LinkerSettings
from librarian.store.db import make_engine, redacted
from librarian.store.sink import DatabaseSink, StoredPriors, session_for
from librarian.store.source import QueueTable

T = TypeVar("T")


def as_is(value: T) -> T:
    """Hand `value` to a task without Prefect walking it. Prefect visits every element of a
    task's parameters to find upstream futures (docs/benchmarks.md: a cost that grew with
    the run). None of ours hold futures. Only for tasks called in the flow's own process:
    a Dask worker receives the wrapper itself."""
    return cast(T, quote(value))


@task(name="load-models", cache_policy=NONE)
def load_pipeline(settings: LinkerSettings) -> Pipeline:
    return pipeline_for(settings)


@task(name="admit-batch", cache_policy=NONE)
def admit_batch(
    pipeline: Pipeline, raw: RawBatch, registry: ChunkRegistry, session: Session | None
) -> Admitted:
    """C.0-C.1 and the prior lookup, in the flow's process (it reads the store)."""
    return pipeline.admit(raw, registry, StoredPriors(session) if session is not None else None)


@task(name="link-batch", cache_policy=NONE)
def link_batch(
    settings: LinkerSettings,
    sections: list[Section],
    run_id: str,
    priors: dict[str, PriorDecision] | None,
) -> BatchResult:
    """C.2-C.10, wherever the task runner puts it (a Dask worker, say), on that process's
    models."""
    return pipeline_for(settings).link_resilient(sections, run_id, priors)


@task(name="write-batch", retries=2, retry_delay_seconds=1, cache_policy=NONE)
def write_files(sink: FileSink, result: BatchResult) -> None:
    sink.write(result)


@task(name="commit-batch", cache_policy=NONE)
def commit_batch(
    sink: DatabaseSink, session: Session, admitted: Admitted, result: BatchResult
) -> None:
    sink.write(session, admitted.raw, admitted.sections, result)


@dataclass
class _InFlight:
    admitted: Admitted
    session: Session | None
    linked: PrefectFuture[BatchResult]

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
        self.admitted.raw.close()


@dataclass
class _Run:
    """One run's wiring state: the source's batches, the sinks, what was counted."""

    source: Source
    pipeline: Pipeline
    settings: LinkerSettings
    run_id: str
    summary: RunSummary
    files: FileSink
    engine: Engine | None = None
    database: DatabaseSink | None = None  # commit mode
    registry: ChunkRegistry = field(default_factory=ChunkRegistry)

    def __post_init__(self) -> None:
        skip = self.database.failed_ids if self.database is not None else set()
        self.batches = iter(self.source.batches(self.settings.batch_size, skip))
        self.eof = False

    def timed(self, stage: str, started: float) -> None:
        add_timings(self.summary, {stage: time.perf_counter() - started})

    def start_next(self) -> _InFlight | None:
        started = time.perf_counter()
        raw = next(self.batches, None)
        if raw is None:
            self.eof = True
            return None
        self.eof = raw.eof
        session = session_for(self.engine, raw) if self.engine is not None else None
        try:
            # The chunk registry grows with the run: it stays in the flow, never walked.
            admitted = admit_batch(
                as_is(self.pipeline), as_is(raw), as_is(self.registry), as_is(session)
            )
            self.timed("read_validate", started)
            # Not as_is: a quoted parameter reaches a Dask worker still wrapped.
            linked = link_batch.submit(
                self.settings, admitted.sections, self.run_id, admitted.priors
            )
        except BaseException:
            if session is not None:
                session.close()
            raw.close()
            raise
        return _InFlight(admitted, session, linked)

    def finish(self, batch: _InFlight) -> None:
        started = time.perf_counter()
        admitted = batch.admitted
        result = admitted.complete(batch.linked.result())
        self.timed("wait_for_link", started)
        if self.database is not None and batch.session is not None:
            started = time.perf_counter()
            commit_batch(as_is(self.database), as_is(batch.session), as_is(admitted), as_is(result))
            self.timed("store_write", started)
        started = time.perf_counter()
        write_files(as_is(self.files), as_is(result))
        self.timed("write", started)
        record_batch(self.summary, admitted.raw, result, result.rejections, result.skips)
        s = self.summary
        get_run_logger().info(
            "batch %d: %d lines (linked %d, review %d, rejected %d, skipped %d so far)",
            s.batches,
            len(admitted.raw.lines),
            s.linked,
            s.review,
            s.rejected,
            s.skipped,
        )
        report_lines(self.run_id, len(admitted.raw.lines) + admitted.raw.blank_lines)

    def close_out(self) -> None:
        """The summary's last fields, checked: every line accounted for."""
        self.summary.finished_at = datetime.now(UTC).isoformat()
        self.summary.timings_s = {k: round(v, 4) for k, v in self.summary.timings_s.items()}
        if self.database is not None:
            stored = self.database.stored
            self.summary.stored = {
                "decisions": stored.decisions,
                "rejections": stored.rejections,
                "already_stored": stored.already_there,
                "failed": len(stored.failed),
                "dead_lettered": stored.dead_lettered,
            }
        check_accounting(self.summary)


def drain(run: _Run, in_flight: int) -> None:
    """Keep `in_flight` batches linking; store and write them in input order."""
    pending: deque[_InFlight] = deque()
    try:
        while not run.eof or pending:
            while not run.eof and len(pending) < max(1, in_flight):
                started = run.start_next()
                if started is not None:
                    pending.append(started)
            if not pending:
                break
            batch = pending.popleft()
            try:
                run.finish(batch)
            finally:
                batch.close()
    finally:
        for batch in pending:  # a failure leaves later batches unstored and unconsumed
            batch.close()


def new_summary(
    source: str,
    out_dir: Path,
    settings: LinkerSettings,
    run_id: str,
    mode: str,
    database: str | None,
) -> RunSummary:
    return RunSummary(
        run_id=run_id,
        mode=mode,
        input=source,
        database=redacted(database) if database else None,
        out_dir=str(out_dir),
        started_at=datetime.now(UTC).isoformat(),
        top_k=settings.top_k,
        top_n=settings.top_n,
        batch_size=settings.batch_size,
    )


def describe_pipeline(summary: RunSummary, pipeline: Pipeline, priors_read: bool) -> None:
    summary.threshold = pipeline.threshold
    summary.models = pipeline.models
    summary.retriever = pipeline.description(priors_read)
    summary.hub = {
        "source": pipeline.hub.source,
        "content_hash": pipeline.hub.content_hash,
        "nodes": len(pipeline.hub.nodes),
    }


def source_of(input_path: Path | None, document: str | None, engine: Engine | None) -> Source:
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
    (CSV, Markdown, simple JSONL) is read as rows of the document `source_name` (default:
    the file's name). `commit` (default: whenever `database` is given): store decisions
    in `database`; a dry run given `database` only reads prior decisions from it.

    `in_flight` batches are linked at once (on a Dask cluster, one or two a worker);
    they are stored and written in input order, so outputs do not depend on it.
    """
    commit = database is not None if commit is None else commit
    # The caller migrates the database once (`librarian run`: before any model loads;
    # a scheduled run: `scheduled_run`).
    engine = make_engine(database) if database else None
    source = source_of(input_path, source_name, engine)
    mode = "commit" if commit else "dry-run"
    summary = new_summary(source.name, out_dir, settings, run_id, mode, database)
    started = time.perf_counter()
    phase(run_id, "loading models")
    pipeline = load_pipeline(settings)
    add_timings(summary, {"load_models": time.perf_counter() - started})
    describe_pipeline(summary, pipeline, priors_read=engine is not None)
    try:
        with FileSink(out_dir) as files:
            summary.outputs = files.paths()
            sink = DatabaseSink(run_id, source.name) if commit else None
            run = _Run(source, pipeline, settings, run_id, summary, files, engine, sink)
            phase(run_id, "linking")
            drain(run, in_flight)
            phase(run_id, "writing")
            run.close_out()
            files.commit(summary)
    finally:
        if engine is not None:
            engine.dispose()
    create_markdown_artifact(
        summary_markdown(summary),
        key="librarian-run-summary",
        description=f"librarian run {run_id}: counts, timings, models, where the outputs went",
    )
    get_run_logger().info(
        "run %s: read %d, linked %d, review %d, rejected %d, skipped %d -> %s",
        run_id,
        summary.read,
        summary.linked,
        summary.review,
        summary.rejected,
        summary.skipped,
        out_dir,
    )
    return summary
