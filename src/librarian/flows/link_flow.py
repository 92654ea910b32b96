"""The linking flow: wiring only. A source's batches are read and prepared (C.0-C.4,
`in_flight` at once, on the task runner); a window of them is linked source by source as a
whole (C.5, in this process: candidate lists only); then each batch is completed (C.6-C.10)
and stored and written in input order. A file's window is the whole file; the queue
table's is one claimed batch (its claim is a transaction: it cannot stay open for the
run), and in commit mode each stored batch's links count as used for the next.
A Prefect task per step (Prefect costs ~30 ms a task).

Dry-run writes files only (and, given a database, reads prior decisions from it for update
detection). Commit mode stores each batch's decisions in one transaction; from the queue
table, that transaction also stamps the rows consumed.
"""

from __future__ import annotations

import time
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
    record_sources,
    summary_markdown,
)
from librarian.pipeline.dedup import ChunkRegistry
from librarian.pipeline.pipeline import Admitted, Pipeline, Prepared
from librarian.pipeline.sinks import FileSink
from librarian.pipeline.source_level import Linked
from librarian.pipeline.sources import Source, file_source
from librarian.schemas.records import (
    BatchResult,
    History,
    PriorDecision,
    RawBatch,
    RunSummary,
    Section,
)
from librarian.settings import LinkerSettings
from librarian.store.db import make_engine, redacted, resolve
from librarian.store.history import source_history
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
    lookup = StoredPriors(session, pipeline.models_digest) if session is not None else None
    return pipeline.admit(raw, registry, lookup)


@task(name="prepare-batch", cache_policy=NONE)
def prepare_batch(
    settings: LinkerSettings,
    sections: list[Section],
    run_id: str,
    priors: dict[str, PriorDecision] | None,
) -> Prepared | BatchResult:
    """C.2-C.4, wherever the task runner puts it (a Dask worker, say), on that process's
    models. A batch that fails is linked row by row at once (each failure a rejection),
    alone: its rows are not linked with the rest of their source."""
    pipeline = pipeline_for(settings)
    try:
        return pipeline.prepare(sections, pipeline.context(run_id), priors)
    except Exception:
        return pipeline.link_resilient(sections, run_id, priors)


@task(name="complete-batch", cache_policy=NONE)
def complete_batch(
    settings: LinkerSettings, prepared: Prepared, linked: list[Linked]
) -> BatchResult:
    """C.6-C.10 of a prepared batch; if that fails, the batch is linked row by row."""
    pipeline = pipeline_for(settings)
    try:
        return pipeline.complete(prepared, linked)
    except Exception:
        return pipeline.link_resilient(prepared.sections, prepared.ctx.run_id, prepared.priors)


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
    session: Session | None  # a queue claim's transaction, held until the batch is stored
    prepared: PrefectFuture[Prepared | BatchResult]
    reported: bool = False  # its lines told to the progress bar

    def report(self, run_id: str) -> None:
        """Tell the progress bar this batch's lines are retrieved (once)."""
        if not self.reported:
            raw = self.admitted.raw
            report_lines(run_id, len(raw.lines) + raw.blank_lines)
            self.reported = True

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
            if session is not None and raw.claim is None:
                session.close()  # a file's batch: a new session stores it
                session = None
            self.timed("read_validate", started)
            # Not as_is: a quoted parameter reaches a Dask worker still wrapped.
            prepared = prepare_batch.submit(
                self.settings, admitted.sections, self.run_id, admitted.priors
            )
        except BaseException:
            if session is not None:
                session.close()
            raw.close()
            raise
        return _InFlight(admitted, session, prepared)

    def link_window(
        self, window: list[_InFlight]
    ) -> list[PrefectFuture[BatchResult] | BatchResult]:
        """C.5 over the window's prepared batches together; each batch's completion."""
        started = time.perf_counter()
        ready = [batch.prepared.result() for batch in window]
        for batch in window:
            report_lines(
                self.run_id, len(batch.admitted.raw.lines) + batch.admitted.raw.blank_lines
            )
        self.timed("wait_for_prepare", started)
        prepared = [p for p in ready if isinstance(p, Prepared)]
        started = time.perf_counter()
        history = self.history(prepared)
        by_batch = self.pipeline.link_sources(prepared, history)
        statuses = {r.status.source: r.status.as_json() for rows in by_batch for r in rows}
        record_sources(self.summary, statuses)
        linked = iter(by_batch)
        self.timed("source_level", started)
        return [
            complete_batch.submit(self.settings, p, next(linked)) if isinstance(p, Prepared) else p
            for p in ready
        ]

    def history(self, prepared: list[Prepared]) -> History | None:
        """What the window's sources already link and their reviewers decided (None:
        no store to read)."""
        if self.engine is None:
            return None
        sources = {s.source_key for p in prepared for _, s in p.to_model}
        with Session(self.engine) as session:
            return source_history(session, sources)

    def finish(self, batch: _InFlight, linked: PrefectFuture[BatchResult] | BatchResult) -> None:
        started = time.perf_counter()
        admitted = batch.admitted
        done = linked if isinstance(linked, BatchResult) else linked.result()
        result = admitted.complete(done)
        self.timed("wait_for_link", started)
        if self.database is not None and self.engine is not None:
            started = time.perf_counter()
            session = batch.session or Session(self.engine)
            batch.session = session
            commit_batch(as_is(self.database), as_is(session), as_is(admitted), as_is(result))
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
                "redecided": stored.redecided,
                "left_to_reviewers": stored.lost_to_review,
            }
        check_accounting(self.summary)


def drain(run: _Run, in_flight: int) -> None:
    """Prepare a window of batches (`in_flight` at once), link it source by source, then
    store and write its batches in input order; until the source is dry."""
    window: list[_InFlight] = []
    try:
        while not run.eof:
            batch = run.start_next()
            if batch is not None:
                window.append(batch)
                if len(window) > max(1, in_flight):
                    oldest = window[-1 - max(1, in_flight)]
                    oldest.prepared.wait()
                    oldest.report(run.run_id)
            whole = batch is None or run.eof or batch.admitted.raw.claim is not None
            if window and whole:
                completing = run.link_window(window)
                for held, result in zip(window, completing, strict=True):
                    run.finish(held, result)
                    held.close()
                window = []
    finally:
        for held in window:  # a failure leaves later batches unstored and unconsumed
            held.close()


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
    in `database` (a `store.db.reference`: Prefect keeps parameters, never pass a password);
    a dry run given `database` only reads prior decisions from it. `in_flight` batches are
    linked at once (on Dask, one or two a worker), stored and written in input order.
    """
    commit = database is not None if commit is None else commit
    # The caller migrates the database once (`librarian run`: before any model loads;
    # a scheduled run: `scheduled_run`).
    engine = make_engine(resolve(database)) if database else None
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
            sink = DatabaseSink(run_id, source.name, pipeline.models_digest) if commit else None
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
