"""The linking flow: a task per batch of lines (Prefect costs ~30 ms a task).

Dry-run writes files only. Commit mode stores each batch's decisions in one transaction;
from the queue table, that transaction also stamps the rows consumed.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar, cast

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE
from prefect.futures import PrefectFuture
from prefect.utilities.annotations import quote
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from pipeline.config import LinkerSettings
from pipeline.decide import RunContext
from pipeline.emit import OutputWriter
from pipeline.ingest import ChunkRegistry, RawBatch, parse_line, read_batch
from pipeline.linker import BatchResult, Linker, link_resilient
from pipeline.models import CachingEmbedder
from pipeline.summary import add_timings, check_accounting, record_batch, summary_markdown
from pipeline.update import PriorDecision, apply_updates
from schemas.envelopes import Envelope
from schemas.records import Rejection, RunSummary, Section, Skip
from schemas.routing import RoutingDecision
from store.db import StoreError, make_engine, reason, redacted, upgrade
from store.decisions import WriteResult, priors, unchanged, write
from store.queue import QUEUE_SOURCE, ClaimedBatch, claim, stamp_consumed
from store.vector_cache import SqliteVectorCache
from store.vectors import retriever_factory

# Progress callbacks by run id: a callable is no flow parameter (parameters are stored by the API).
_PROGRESS: dict[str, Callable[[int], None]] = {}


def on_progress(run_id: str, callback: Callable[[int], None] | None) -> None:
    if callback is None:
        _PROGRESS.pop(run_id, None)
    else:
        _PROGRESS[run_id] = callback


# Loaded models, one linker per settings per process: a Dask worker loads its own once,
# never receives one by pickle (hundreds of MB), and keeps it for every later batch.
_LINKERS: dict[str, Linker] = {}


def linker_for(settings: LinkerSettings) -> Linker:
    key = settings.model_dump_json()
    if key not in _LINKERS:
        linker = Linker.from_settings(
            settings, retriever_factory(settings.vector_backend, settings.vector_db)
        )
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
    task's parameters to find upstream futures: 0.2-0.6 s a batch for 256 envelopes, and
    growing with the run for anything that grows. None of ours hold futures. Only for
    tasks called in the flow's own process: a Dask worker receives the wrapper itself."""
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
def claim_batch(engine: Engine, limit: int) -> ClaimedBatch:
    return claim(engine, limit)


@task(name="look-up-prior-decisions", cache_policy=NONE)
def look_up_priors(
    session: Session, sections: list[Section]
) -> tuple[list[Skip], dict[str, PriorDecision]]:
    return unchanged(session, sections), priors(session, sections)


@task(name="commit-batch", cache_policy=NONE)
def commit_batch(
    session: Session,
    run_id: str,
    envelopes: list[Envelope],
    sections: dict[str, Section],
    rejections: list[Rejection],
    raw_lines: dict[int, bytes],
    source: str,
    claimed_ids: list[int],
    routing: list[RoutingDecision],
) -> WriteResult:
    """Decisions, rejections and (from the queue table) consumed_at: one transaction."""
    queue_ids = {s.chunk_id: s.line for s in sections.values()} if claimed_ids else None
    try:
        result = write(
            session, run_id, envelopes, sections, rejections, raw_lines, source, queue_ids,
            routing,
        )  # fmt: skip
        stamp_consumed(session, claimed_ids)
        session.commit()
    except SQLAlchemyError as exc:
        session.rollback()
        raise StoreError(f"the database refused the batch: {reason(exc)}") from exc
    return result


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


@flow(name="librarian-link", validate_parameters=False)
def link_queue(
    input_path: Path | None,
    out_dir: Path,
    settings: LinkerSettings,
    run_id: str,
    database: str | None = None,
    in_flight: int = 1,
) -> RunSummary:
    """Dry-run (`database` None): files only. Commit: decisions into `database`, and the
    same files as a record. `input_path` None: drain the database's knowledge_queue.

    `in_flight` batches are linked at once (on a Dask cluster, one or two a worker);
    they are stored and written in input order, so outputs do not depend on it.
    """
    logger = get_run_logger()
    engine = make_engine(database) if database else None
    if engine is not None:
        upgrade(engine)
    source = str(input_path) if input_path is not None else QUEUE_SOURCE
    summary = RunSummary(
        run_id=run_id,
        mode="commit" if engine is not None else "dry-run",
        input=source,
        database=redacted(database) if database else None,
        out_dir=str(out_dir),
        started_at=datetime.now(UTC).isoformat(),
        top_k=settings.top_k,
        top_n=settings.top_n,
        batch_size=settings.batch_size,
    )

    def timed(stage: str, started: float) -> None:
        add_timings(summary, {stage: time.perf_counter() - started})

    started = time.perf_counter()
    linker = load_linker(settings)
    timed("load_models", started)
    summary.threshold = linker.threshold
    summary.models = linker.model_ids
    summary.retriever = linker.retriever
    summary.hub = {
        "source": linker.hub.source,
        "content_hash": linker.hub.content_hash,
        "nodes": len(linker.hub.nodes),
    }
    registry = ChunkRegistry()
    stored = WriteResult()
    position = {"offset": 0, "next_line": 1, "eof": False}

    def start_next() -> _InFlight:
        started = time.perf_counter()
        session: Session | None = None
        claimed_ids: list[int] = []
        if input_path is None:
            assert engine is not None
            claimed = claim_batch(engine, settings.batch_size)
            session, claimed_ids = claimed.session, claimed.ids
            raw = RawBatch(claimed.lines, 0, 0, 0, eof=len(claimed.lines) < settings.batch_size)
            position["eof"] = raw.eof
        else:
            raw = read_batch_task(
                input_path, position["offset"], position["next_line"], settings.batch_size
            )
            position.update(offset=raw.next_offset, next_line=raw.next_line, eof=raw.eof)
            session = Session(engine) if engine is not None else None
        try:
            # The run's chunk registry grows with the input: handed to a task, Prefect walks
            # it for every call (1.4 s a batch at 100,000 chunks), so it stays in the flow.
            parsed = [registry.admit(p) for p in validate_batch(as_is(raw))]
            timed("read_validate", started)
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
                timed("store_read", started)
            # Not as_is: a quoted parameter reaches a Dask worker still wrapped.
            linked = link_batch.submit(settings, sections, run_id)
        except BaseException:
            if session is not None:
                session.close()
            raise
        return _InFlight(raw, sections, rejections, skips, prior_by_span, session, claimed_ids,
                         linked)  # fmt: skip

    def finish(batch: _InFlight) -> None:
        started = time.perf_counter()
        result, failed = batch.linked.result()
        add_timings(summary, {"wait_for_link": time.perf_counter() - started})
        batch.rejections.extend(failed)
        if batch.session is not None:
            started = time.perf_counter()
            by_chunk = {s.chunk_id: s for s in batch.sections}
            ctx = RunContext(run_id, linker.threshold, datetime.now(UTC))
            result.envelopes = apply_updates(
                result.envelopes, {c: s.span_key for c, s in by_chunk.items()},
                batch.prior_by_span, ctx,
            )  # fmt: skip
            written = commit_batch(
                as_is(batch.session), run_id, as_is(result.envelopes), as_is(by_chunk),
                as_is(batch.rejections), as_is(dict(batch.raw.lines)), source,
                as_is(batch.claimed_ids), as_is(result.routing),
            )  # fmt: skip
            stored.decisions += written.decisions
            stored.rejections += written.rejections
            stored.already_there += written.already_there
            timed("store_write", started)
        started = time.perf_counter()
        write_batch(as_is(writer), as_is(result), as_is(batch.rejections), as_is(batch.skips))
        timed("write", started)
        record_batch(summary, batch.raw, result, batch.rejections, batch.skips)
        logger.info(
            "batch %d: %d lines (linked %d, review %d, rejected %d, skipped %d so far)",
            summary.batches, len(batch.raw.lines), summary.linked, summary.review,
            summary.rejected, summary.skipped,
        )  # fmt: skip
        callback = _PROGRESS.get(run_id)
        if callback is not None:
            callback(len(batch.raw.lines) + batch.raw.blank_lines)

    pending: deque[_InFlight] = deque()
    try:
        with OutputWriter(out_dir) as writer:
            summary.outputs = writer.paths()
            while not position["eof"] or pending:
                while not position["eof"] and len(pending) < max(1, in_flight):
                    pending.append(start_next())
                batch = pending.popleft()
                try:
                    finish(batch)
                finally:
                    if batch.session is not None:
                        batch.session.close()
            summary.finished_at = datetime.now(UTC).isoformat()
            summary.timings_s = {k: round(v, 4) for k, v in summary.timings_s.items()}
            if engine is not None:
                summary.stored = {
                    "decisions": stored.decisions,
                    "rejections": stored.rejections,
                    "already_stored": stored.already_there,
                }
            check_accounting(summary)
            writer.commit(summary)
    finally:
        for batch in pending:  # a failure leaves later batches unstored and unconsumed
            if batch.session is not None:
                batch.session.close()
        if engine is not None:
            engine.dispose()
    create_markdown_artifact(
        summary_markdown(summary),
        key="librarian-run-summary",
        description=f"librarian run {run_id}: counts, timings, models, where the outputs went",
    )
    logger.info(
        "run %s: read %d, linked %d, review %d, rejected %d, skipped %d -> %s",
        run_id, summary.read, summary.linked, summary.review, summary.rejected,
        summary.skipped, out_dir,
    )  # fmt: skip
    return summary
