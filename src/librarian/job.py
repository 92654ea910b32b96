"""A link job, put together: what it reads, where its decisions go, with which models, and
its accounting. Everything about a `librarian run` but where its work runs, which the flow
(`flows/link_flow.py`) says: it hands in the executor (Prefect tasks, on Dask or not), how
models load, and its logger.

Dry-run writes files only (and, given a database, reads prior decisions from it for update
detection). Commit mode stores each batch's decisions in one transaction; from the queue
table, that transaction also stamps the rows consumed. A relink is a job too: its input a
store source's open items (`OpenItems`), decided again under the policy its runs keep,
with its own summary.json and accounting.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from librarian.errors import UsageError
from librarian.pipeline.accounting import add_timings, close_out
from librarian.pipeline.api import Admitted
from librarian.pipeline.dedup import ChunkRegistry
from librarian.pipeline.pipeline import Pipeline
from librarian.pipeline.run import (
    Executor,
    InProcess,
    Progress,
    RunParts,
    Silent,
    Sink,
    run_source,
)
from librarian.pipeline.sinks import FileSink
from librarian.pipeline.sources import Source, file_source, reading_of
from librarian.pipeline.spill import DiskSpill
from librarian.pipeline.summary import describe_pipeline, new_summary
from librarian.schemas.records import RawBatch, RunSummary
from librarian.settings import LinkerSettings
from librarian.store.db import make_engine, redacted, resolve
from librarian.store.open_items import open_sections
from librarian.store.policies import policy_of, store_policy
from librarian.store.sink import DatabaseSink, DatabaseStore
from librarian.store.source import QueueTable


@dataclass(frozen=True)
class LinkJob:
    """One run, as its flow's parameters give it. `input_path` None: drain the database's
    knowledge_queue (commit mode). A plain input is read as rows of the document
    `source_name` (default: the file's name). `commit` (default: whenever `database` is
    given): store decisions in `database` (a `store.db.reference`, no password); a dry run
    given `database` only reads prior decisions from it. `in_flight` batches are kept in
    flight beside the one taken (0 here: a Dask runner's workers want several), stored and
    written in input order. `relink`: the store source whose open items are decided again
    (the input), under the policy its runs keep with `policy_given` (DecisionPolicy fields
    set for this run) over it."""

    input_path: Path | None
    out_dir: Path
    settings: LinkerSettings
    run_id: str
    database: str | None = None
    in_flight: int = 0
    source_name: str | None = None
    commit: bool | None = None
    relink: str | None = None
    policy_given: Mapping[str, Any] = field(default_factory=dict)

    @property
    def commits(self) -> bool:
        return self.database is not None if self.commit is None else self.commit


@dataclass(frozen=True)
class HandOff:
    """What the command that starts a run gives it besides parameters (Prefect stores a
    flow's parameters through its API; these are no parameters it could store): the input
    it has read already, not to be read twice, who watches the run's progress, the models
    it loaded (checked before anything started: not loaded twice), and the database URLs
    it holds by their reference (`store.db.known_urls`: their secrets stay in process),
    and who else reads the decisions as they are made (`watching`: a relink's caller)."""

    source: Source | None = None
    progress: Progress = field(default_factory=Silent)
    pipeline: Pipeline | None = None
    urls: Mapping[str, str] = field(default_factory=dict)
    watching: tuple[Sink, ...] = ()

    def __reduce__(self) -> tuple[type[HandOff], tuple[()]]:
        # Nothing of it leaves the process: Prefect sends the flow's context, parameters
        # and all, with each task to a Dask worker, which needs none of this (a pipeline
        # holds open files; the URLs hold secrets; the input can be large).
        return (HandOff, ())


@dataclass(frozen=True)
class Where:
    """Where the job's work runs, as its flow says: the runner's executor for the model
    steps, how the models load (once per process), and where log lines go."""

    executor: Executor
    load: Callable[[LinkerSettings], Pipeline]
    log: Callable[[str], None]


def here(pipeline: Pipeline) -> Where:
    """Where a job started without a flow runs (a relink): each step in this process."""
    return Where(InProcess(pipeline), lambda _: pipeline, lambda _: None)


@dataclass(frozen=True)
class OpenItems:
    """A store source's open review items as a run's input: the sections they were decided
    from, each under its stored span key, read when iterated. One batch: the source is
    linked as a whole, its cut chosen from every item a run would link with them."""

    engine: Engine
    key: str

    @property
    def name(self) -> str:
        return f"relink: the open items of {self.key}"

    def batches(self, size: int, skip: Collection[int] = ()) -> Iterator[Admitted]:
        with Session(self.engine) as session:
            sections = open_sections(session, self.key)
        raw = RawBatch([(s.line, s.text.encode()) for s in sections], 0, 0, 0, eof=True)
        yield Admitted(raw, sections, [], [], None)


def source_of(job: LinkJob, given: Source | None, engine: Engine | None) -> Source:
    if given is not None:
        return given
    if job.input_path is not None:
        return file_source(job.input_path, job.source_name)
    if engine is None:
        raise UsageError("draining the queue table needs a database (--db, or commit mode)")
    return OpenItems(engine, job.relink) if job.relink is not None else QueueTable(engine)


def decided_under(job: LinkJob, pipeline: Pipeline, engine: Engine | None) -> Pipeline:
    """The pipeline the job decides with: a relink's under the policy its source's runs
    keep (`policy_of`) with the fields given for it over it; any other job's as built."""
    if job.relink is None or engine is None:
        return pipeline
    with Session(engine) as session:
        policy = policy_of(session, job.relink, pipeline.policy)
    return pipeline.with_policy(replace(policy, **job.policy_given).checked())


def versioned(source: Source, engine: Engine | None) -> Source:
    """A document a commit run reads, matched by text to its last version in the store
    (`pipeline.aligned`: a requirement keeps its identity when a person re-letters it);
    any other source as it is."""
    from librarian.pipeline.aligned import Item
    from librarian.pipeline.sources import PlainFile
    from librarian.store.versions import last_version

    if engine is None or not isinstance(source, PlainFile):
        return source
    previous = tuple(Item(*stored) for stored in last_version(engine, source.artifact_id))
    return source.matched_to(previous) if previous else source


def relabelled_in(engine: Engine, source: Source) -> None:
    """A document's items its new version re-lettered, stored under their new ids (one
    whose text changed was stored again with it)."""
    from librarian.pipeline.sources import PlainFile
    from librarian.store.versions import relabel

    if not isinstance(source, PlainFile) or not source.previous:
        return
    located = {
        str(item["chunk_id"]): str(item["locator"]["id"])
        for item in source.rows.items.values()
        if item.get("chunk_id") and item.get("locator", {}).get("id")
    }
    relabel(engine, source.rows.artifact_id, located)


def withdrawn_from(engine: Engine, source: Source, summary: RunSummary, allow: bool) -> list[str]:
    """A document read whole: what its new version no longer holds, withdrawn (a part of
    the queue withdraws nothing); held back, unless `allow`, when any of its rows was
    rejected (`summary.rejected`: a page or row it could not read, or one refused)."""
    from librarian.pipeline.sources import PlainFile
    from librarian.store.versions import withdraw_missing

    if not isinstance(source, PlainFile):
        return []
    rows = source.rows
    return withdraw_missing(
        engine, rows.artifact_id, rows.chunk_ids, unread=summary.rejected, allow=allow
    ).lines()


def document_of(source: Source) -> frozenset[str] | None:
    """The chunks of a document read whole (None: a queue's rows, a source's open items)."""
    from librarian.pipeline.sources import PlainFile

    return source.rows.chunk_ids if isinstance(source, PlainFile) else None


def run_job(
    job: LinkJob, where: Where, hand_off: HandOff, engine: Engine | None = None
) -> RunSummary:
    """The job run through `where`: its summary, once every row is accounted for.
    `engine`: the caller's own on `job.database` (a relink's), else one made here."""
    if engine is not None:
        return _run(job, where, hand_off, engine)
    # The caller migrates the database once (`librarian run`: before any model loads;
    # a scheduled run: `scheduled_run`).
    engine = make_engine(resolve(job.database, hand_off.urls)) if job.database else None
    try:
        return _run(job, where, hand_off, engine)
    finally:
        if engine is not None:
            engine.dispose()


def _run(job: LinkJob, where: Where, hand_off: HandOff, engine: Engine | None) -> RunSummary:
    source = versioned(source_of(job, hand_off.source, engine), engine if job.commits else None)
    shown = redacted(job.database) if job.database else None
    mode = "commit" if job.commits else "dry-run"
    summary = new_summary(source.name, job.out_dir, job.settings, job.run_id, mode, shown)
    summary.reading = reading_of(source)
    started = time.perf_counter()
    hand_off.progress.phase("loading models")
    pipeline = decided_under(job, hand_off.pipeline or where.load(job.settings), engine)
    add_timings(summary, {"load_models": time.perf_counter() - started})
    # A relink's items are the store's own: no earlier decision to compare them with.
    describe_pipeline(summary, pipeline, priors_read=engine is not None and job.relink is None)
    stored_in = None
    if job.commits and engine is not None:
        relinks = job.relink is not None
        digest = pipeline.models_digest
        stored_in = DatabaseSink(engine, job.run_id, source.name, digest, relink_open=relinks)
        store_policy(engine, job.run_id, pipeline.policy)
    names = {node.cre_id: node.name for node in pipeline.hub.nodes}
    with FileSink(job.out_dir, names) as files:
        summary.outputs = files.paths()
        sinks: list[Sink] = [stored_in, files] if stored_in is not None else [files]
        sinks += hand_off.watching
        store = (
            DatabaseStore(engine, pipeline.models_digest, document_of(source))
            if engine is not None
            else None
        )
        spill = DiskSpill()
        try:
            parts = RunParts(
                executor=where.executor,
                sinks=sinks,
                store=store,
                progress=hand_off.progress,
                spill=spill,
                in_flight=job.in_flight,
                registry=ChunkRegistry(spill.mapping("seen"), spill.mapping("spans")),
                log=where.log,
            )
            hand_off.progress.phase("linking")
            skip = stored_in.failed_ids if stored_in is not None else set()
            batches = source.batches(job.settings.batch_size, skip)
            run_source(pipeline, batches, pipeline.context(job.run_id), summary, parts)
            if engine is not None and stored_in is not None:
                allow = job.settings.allow_withdraw
                summary.withdrawn = withdrawn_from(engine, source, summary, allow)
                relabelled_in(engine, source)
            hand_off.progress.phase("writing")
        finally:
            spill.close()
        close_out(summary, stored_in.counts() if stored_in is not None else None)
        files.commit(summary)
    return summary
