"""The linking flow: a task per batch of lines (Prefect costs ~30 ms a task).

Dry-run writes files only. Commit mode stores each batch's decisions in one transaction;
from the queue table, that transaction also stamps the rows consumed. The flow only
wires: reading, validating, linking, storing and writing are the stages' and the store's.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol, TypeVar, cast

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE
from prefect.futures import PrefectFuture
from prefect.utilities.annotations import quote
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from librarian.factory import build_linker
from librarian.models.cache import CachingEmbedder, SqliteVectorCache
from librarian.pipeline.accounting import (
    add_timings,
    check_accounting,
    record_batch,
    summary_markdown,
)
from librarian.pipeline.emit import OutputWriter
from librarian.pipeline.ingest import ChunkRegistry, RawBatch, parse_line, read_batch, rejected
from librarian.pipeline.linker import Linker, link_resilient
from librarian.pipeline.plain import is_plain, plain_lines
from librarian.pipeline.update import apply_updates
from librarian.schemas.records import (
    BatchResult,
    PriorDecision,
    RejectCode,
    Rejection,
    RunSummary,
    Section,
    Skip,
)
from librarian.settings import LinkerSettings
from librarian.store.db import make_engine, redacted, upgrade
from librarian.store.decisions import StoredBatch, WriteResult, commit, priors, unchanged
from librarian.store.queue import QUEUE_SOURCE, ClaimedBatch, claim


# Progress callbacks by run id: a callable is no flow parameter (parameters are stored by the API).
class RunProgress(Protocol):
    """Told what a run is doing: its phase, and lines done as batches finish."""

    def phase(self, name: str) -> None: ...

    def advance(self, lines: int) -> None: ...


_PROGRESS: dict[str, RunProgress] = {}


def on_progress(run_id: str, progress: RunProgress | None) -> None:
    if progress is None:
        _PROGRESS.pop(run_id, None)
    else:
        _PROGRESS[run_id] = progress


def _phase(run_id: str, name: str) -> None:
    progress = _PROGRESS.get(run_id)
    if progress is not None:
        progress.phase(name)


# Loaded models, one linker per settings per process: a Dask worker loads its own once,
# never receives one by pickle (hundreds of MB), and keeps it for every later batch.
_LINKERS: dict[str, Linker] = {}


def linker_for(settings: LinkerSettings) -> Linker:
    key = settings.model_dump_json()
    if key not in _LINKERS:
        linker = build_linker(settings)
        if settings.cache_dir is not None:
            # Section vectors by content hash: a re-run of unchanged text does no model work.
            name = f"queries-{linker.embedder.fingerprint[:16]}.sqlite"
            cache = SqliteVectorCache(settings.cache_dir / name, linker.embedder.dimension)
            linker.embedder = CachingEmbedder(linker.embedder, cache)
        _LINKERS[key] = linker
    return _LINKERS[key]


@task(name="load-models", cache_policy=NONE)
def load_linker(settings: LinkerSettings) -> Linker:
    return linker_for(settings)


T = TypeVar("T")


def as_is(value: T) -> T:
    """Hand `value` to a task without Prefect walking it. Prefect visits every element of a
    task's parameters to find upstream futures (docs/benchmarks.md: a cost that grew with
    the run). None of ours hold futures. Only for tasks called in the flow's own process:
    a Dask worker receives the wrapper itself."""
    return cast(T, quote(value))


@task(name="read-batch", retries=2, retry_delay_seconds=1, cache_policy=NONE)
def read_batch_task(path: Path, offset: int, first_line: int, max_lines: int) -> RawBatch:
    return read_batch(path, offset, first_line, max_lines)


@task(name="validate-batch", cache_policy=NONE)
def validate_batch(batch: RawBatch) -> list[Section | Rejection | Skip]:
    return [parse_line(line, raw) for line, raw in batch.lines]


@task(name="link-batch", cache_policy=NONE)
def link_batch(
    settings: LinkerSettings, sections: list[Section], run_id: str
) -> tuple[BatchResult, list[Rejection]]:
    """Runs wherever the task runner puts it (a Dask worker, say), on that process's models."""
    return link_resilient(linker_for(settings), sections, run_id)


@task(name="write-batch", retries=2, retry_delay_seconds=1, cache_policy=NONE)
def write_batch(
    writer: OutputWriter, result: BatchResult, rejections: list[Rejection], skips: list[Skip]
) -> None:
    writer.write_batch(result.envelopes, rejections, skips, result.routing)


@task(name="claim-queue-batch", cache_policy=NONE)
def claim_batch(engine: Engine, limit: int, skip: set[int]) -> ClaimedBatch:
    return claim(engine, limit, skip)


@task(name="look-up-prior-decisions", cache_policy=NONE)
def look_up_priors(
    session: Session, sections: list[Section]
) -> tuple[list[Skip], dict[str, PriorDecision]]:
    return unchanged(session, sections), priors(session, sections)


@task(name="commit-batch", cache_policy=NONE)
def commit_batch(session: Session, batch: StoredBatch) -> WriteResult:
    """Decisions, rejections and (from the queue table) consumed_at: one transaction, or,
    when the database refuses the batch, one a row so only the offending rows fail."""
    return commit(session, batch)


@dataclass
class _InFlight:
    """A batch read, validated and handed to the linker, waiting to be stored and written."""

    raw: RawBatch
    sections: list[Section]
    rejections: list[Rejection]
    skips: list[Skip]
    prior_by_span: dict[str, PriorDecision]
    session: Session | None
    claimed_ids: list[int]
    linked: PrefectFuture[tuple[BatchResult, list[Rejection]]]

    def close(self) -> None:
        if self.session is not None:
            self.session.close()


@dataclass
class _Run:
    """One run's state: where the input stands, what was counted, where it goes."""

    input_path: Path | None
    settings: LinkerSettings
    run_id: str
    engine: Engine | None
    summary: RunSummary
    linker: Linker
    registry: ChunkRegistry = field(default_factory=ChunkRegistry)
    stored: WriteResult = field(default_factory=WriteResult)
    failed_ids: set[int] = field(default_factory=set)  # queue rows left for a later run
    # A plain input (CSV, Markdown, simple JSONL), read whole as KnowledgeItem lines.
    preloaded: list[tuple[int, bytes]] | None = None
    offset: int = 0
    next_line: int = 1
    eof: bool = False

    @property
    def source(self) -> str:
        return str(self.input_path) if self.input_path is not None else QUEUE_SOURCE

    def timed(self, stage: str, started: float) -> None:
        add_timings(self.summary, {stage: time.perf_counter() - started})

    def read_next(self) -> tuple[RawBatch, Session | None, list[int]]:
        """The next raw batch, from the file or claimed from the queue table."""
        if self.input_path is None:
            assert self.engine is not None
            claimed = claim_batch(self.engine, self.settings.batch_size, as_is(self.failed_ids))
            raw = RawBatch(
                claimed.lines, 0, 0, 0, eof=len(claimed.lines) < self.settings.batch_size
            )
            self.eof = raw.eof
            return raw, claimed.session, claimed.ids
        if self.preloaded is not None:
            lines = self.preloaded[self.offset : self.offset + self.settings.batch_size]
            self.offset += len(lines)
            self.eof = self.offset >= len(self.preloaded)
            raw = RawBatch(lines, 0, self.offset, 0, self.eof)
            return raw, Session(self.engine) if self.engine is not None else None, []
        raw = read_batch_task(
            self.input_path, self.offset, self.next_line, self.settings.batch_size
        )
        self.offset, self.next_line, self.eof = raw.next_offset, raw.next_line, raw.eof
        return raw, Session(self.engine) if self.engine is not None else None, []

    def start_next(self) -> _InFlight:
        started = time.perf_counter()
        raw, session, claimed_ids = self.read_next()
        try:
            # The run's chunk registry grows with the input: it stays in the flow, never a
            # task parameter (Prefect would walk it for every call).
            parsed = [self.registry.admit(p) for p in validate_batch(as_is(raw))]
            self.timed("read_validate", started)
            sections = [p for p in parsed if isinstance(p, Section)]
            rejections = [p for p in parsed if isinstance(p, Rejection)]
            skips = [p for p in parsed if isinstance(p, Skip)]
            prior_by_span: dict[str, PriorDecision] = {}
            if session is not None:
                started = time.perf_counter()
                already, prior_by_span = look_up_priors(as_is(session), as_is(sections))
                done = {skip.line for skip in already}
                sections = [s for s in sections if s.line not in done]
                skips.extend(already)
                self.timed("store_read", started)
            # Not as_is: a quoted parameter reaches a Dask worker still wrapped.
            linked = link_batch.submit(self.settings, sections, self.run_id)
        except BaseException:
            if session is not None:
                session.close()
            raise
        return _InFlight(raw, sections, rejections, skips, prior_by_span, session, claimed_ids,
                         linked)  # fmt: skip

    def finish(self, batch: _InFlight, writer: OutputWriter) -> None:
        started = time.perf_counter()
        result, failed = batch.linked.result()
        self.timed("wait_for_link", started)
        if batch.session is not None:
            self.store(batch, result, failed)
        else:
            batch.rejections.extend(failed)
        started = time.perf_counter()
        write_batch(as_is(writer), as_is(result), as_is(batch.rejections), as_is(batch.skips))
        self.timed("write", started)
        record_batch(self.summary, batch.raw, result, batch.rejections, batch.skips)
        self.report(batch)

    def store(self, batch: _InFlight, result: BatchResult, failed: list[Rejection]) -> None:
        """Into the database: decisions, rejections and consumed stamps. Rows that errored
        while processed are, from a file, rejections; from the queue, left for a later
        run. Rows the database refused become rejections in this run's files."""
        started = time.perf_counter()
        assert batch.session is not None
        by_chunk = {s.chunk_id: s for s in batch.sections}
        spans = {c: s.span_key for c, s in by_chunk.items()}
        result.envelopes = apply_updates(result.envelopes, spans, batch.prior_by_span)
        from_queue = bool(batch.claimed_ids)
        failures = {r.line: r.message for r in failed} if from_queue else {}
        rejections = batch.rejections + ([] if from_queue else failed)
        stored = StoredBatch(self.run_id, result.envelopes, by_chunk, rejections,
                             dict(batch.raw.lines), self.source, batch.claimed_ids,
                             result.routing, failures)  # fmt: skip
        written = commit_batch(as_is(batch.session), as_is(stored))
        self.stored.add(written)
        batch.rejections = rejections
        self.account_failures(batch, result, written, from_queue)
        self.timed("store_write", started)

    def account_failures(
        self, batch: _InFlight, result: BatchResult, written: WriteResult, from_queue: bool
    ) -> None:
        """Lines that failed leave their envelopes and count as rejected in this run."""
        if not written.failed:
            return
        line_of = {s.chunk_id: s.line for s in batch.sections}
        result.envelopes = [
            e for e in result.envelopes if line_of[e.chunk_id] not in written.failed
        ]
        already = {r.line for r in batch.rejections}
        for line, why in sorted(written.failed.items()):
            if from_queue:
                self.failed_ids.add(line)
                why = f"{why}; left in the queue for a later run (queue_attempts counts it)"
            if line not in already:
                chunk = next((c for c, n in line_of.items() if n == line), None)
                batch.rejections.append(rejected(line, RejectCode.PROCESSING_ERROR, why, chunk))

    def report(self, batch: _InFlight) -> None:
        s = self.summary
        get_run_logger().info(
            "batch %d: %d lines (linked %d, review %d, rejected %d, skipped %d so far)",
            s.batches, len(batch.raw.lines), s.linked, s.review, s.rejected, s.skipped,
        )  # fmt: skip
        progress = _PROGRESS.get(self.run_id)
        if progress is not None:
            progress.advance(len(batch.raw.lines) + batch.raw.blank_lines)

    def close_out(self) -> None:
        """The summary's last fields, checked: every line accounted for."""
        self.summary.finished_at = datetime.now(UTC).isoformat()
        self.summary.timings_s = {k: round(v, 4) for k, v in self.summary.timings_s.items()}
        if self.engine is not None:
            self.summary.stored = {
                "decisions": self.stored.decisions,
                "rejections": self.stored.rejections,
                "already_stored": self.stored.already_there,
                "failed": len(self.stored.failed),
                "dead_lettered": self.stored.dead_lettered,
            }
        check_accounting(self.summary)


def new_summary(
    source: str, out_dir: Path, settings: LinkerSettings, run_id: str, database: str | None
) -> RunSummary:
    return RunSummary(
        run_id=run_id,
        mode="commit" if database else "dry-run",
        input=source,
        database=redacted(database) if database else None,
        out_dir=str(out_dir),
        started_at=datetime.now(UTC).isoformat(),
        top_k=settings.top_k,
        top_n=settings.top_n,
        batch_size=settings.batch_size,
    )


def describe_linker(summary: RunSummary, linker: Linker) -> None:
    summary.threshold = linker.threshold
    summary.models = linker.model_ids
    summary.retriever = linker.description
    summary.hub = {
        "source": linker.hub.source,
        "content_hash": linker.hub.content_hash,
        "nodes": len(linker.hub.nodes),
    }


def drain(run: _Run, writer: OutputWriter, in_flight: int) -> None:
    """Keep `in_flight` batches linking; store and write them in input order."""
    pending: deque[_InFlight] = deque()
    try:
        while not run.eof or pending:
            while not run.eof and len(pending) < max(1, in_flight):
                pending.append(run.start_next())
            batch = pending.popleft()
            try:
                run.finish(batch, writer)
            finally:
                batch.close()
    finally:
        for batch in pending:  # a failure leaves later batches unstored and unconsumed
            batch.close()


@flow(name="librarian-link", validate_parameters=False)
def link_queue(
    input_path: Path | None,
    out_dir: Path,
    settings: LinkerSettings,
    run_id: str,
    database: str | None = None,
    in_flight: int = 1,
    source_name: str | None = None,
) -> RunSummary:
    """Dry-run (`database` None): files only. Commit: decisions into `database`, and the
    same files as a record. `input_path` None: drain the database's knowledge_queue. A
    plain input (CSV, Markdown, simple JSONL) is read as rows of the document
    `source_name` (default: the file's name).

    `in_flight` batches are linked at once (on a Dask cluster, one or two a worker);
    they are stored and written in input order, so outputs do not depend on it.
    """
    engine = make_engine(database) if database else None
    if engine is not None:
        upgrade(engine)
    source = str(input_path) if input_path is not None else QUEUE_SOURCE
    summary = new_summary(source, out_dir, settings, run_id, database)
    started = time.perf_counter()
    _phase(run_id, "loading models")
    linker = load_linker(settings)
    add_timings(summary, {"load_models": time.perf_counter() - started})
    describe_linker(summary, linker)
    run = _Run(input_path, settings, run_id, engine, summary, linker)
    if input_path is not None and is_plain(input_path):
        run.preloaded = plain_lines(input_path, source_name)
    try:
        with OutputWriter(out_dir) as writer:
            summary.outputs = writer.paths()
            _phase(run_id, "linking")
            drain(run, writer, in_flight)
            _phase(run_id, "writing")
            run.close_out()
            writer.commit(summary)
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
        run_id, summary.read, summary.linked, summary.review, summary.rejected,
        summary.skipped, out_dir,
    )  # fmt: skip
    return summary
