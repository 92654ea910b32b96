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
from typing import Any, Protocol

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
from librarian.pipeline.sources import PlainFile, Source, file_source, reading_of
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
    """A store source's open review items as a run's input (a relink): the sections they
    were decided from, each under its stored span key, read when iterated. One batch: the
    source is linked as a whole, its cut chosen from every item a run would link with
    them. Decided under the policy the source's runs keep (`policy_of`) with the fields
    `given` over it; the items are the store's own, so no earlier decision is looked up,
    and their decisions close the open items they decide again."""

    engine: Engine
    key: str
    given: Mapping[str, Any] = field(default_factory=dict)
    reads_priors: bool = False
    relinks_open: bool = True

    @property
    def source(self) -> Source:
        return self

    @property
    def name(self) -> str:
        return f"relink: the open items of {self.key}"

    def batches(self, size: int, skip: Collection[int] = ()) -> Iterator[Admitted]:
        with Session(self.engine) as session:
            sections = open_sections(session, self.key)
        raw = RawBatch([(s.line, s.text.encode()) for s in sections], 0, 0, 0, eof=True)
        yield Admitted(raw, sections, [], [], None)

    def decided_under(self, pipeline: Pipeline) -> Pipeline:
        with Session(self.engine) as session:
            policy = policy_of(session, self.key, pipeline.policy)
        return pipeline.with_policy(replace(policy, **self.given).checked())

    def document(self) -> frozenset[str] | None:
        return None

    def stored(self, engine: Engine, summary: RunSummary, allow: bool) -> list[str]:
        return []


class JobInput(Protocol):
    """What a job reads, and what that input says of the run: the policy it decides
    under, whether it looks up its rows' earlier decisions, how its decisions are stored,
    and what a commit run does with the store once they are (`Rows`, `Document`,
    `OpenItems`)."""

    @property
    def source(self) -> Source: ...

    @property
    def reads_priors(self) -> bool:
        """Whether a row's earlier decision is looked up (update detection)."""
        ...

    @property
    def relinks_open(self) -> bool:
        """Whether its decisions close the store's open items they decide again."""
        ...

    def decided_under(self, pipeline: Pipeline) -> Pipeline:
        """The pipeline its rows are decided with."""
        ...

    def document(self) -> frozenset[str] | None:
        """The chunks of a document read whole (None: not a whole document)."""
        ...

    def stored(self, engine: Engine, summary: RunSummary, allow: bool) -> list[str]:
        """After a commit run: what the store keeps of the input as a whole (a document's
        re-lettered items, what its new version withdrew), said in lines."""
        ...


@dataclass(frozen=True)
class Rows:
    """Rows read from the queue table or a file, each a section of its own."""

    source: Source
    reads_priors: bool = True
    relinks_open: bool = False

    def decided_under(self, pipeline: Pipeline) -> Pipeline:
        return pipeline

    def document(self) -> frozenset[str] | None:
        return None

    def stored(self, engine: Engine, summary: RunSummary, allow: bool) -> list[str]:
        return []


@dataclass(frozen=True)
class Document(Rows):
    """A document read whole (`PlainFile`): matched by text to its last version in the
    store when a commit run reads it (`pipeline.aligned`: a requirement keeps its
    identity when a person re-letters it); once stored, what its new version no longer
    holds is withdrawn, and its re-lettered items stored under their new ids."""

    source: PlainFile

    def document(self) -> frozenset[str] | None:
        return self.source.rows.chunk_ids

    def stored(self, engine: Engine, summary: RunSummary, allow: bool) -> list[str]:
        """Withdrawn, what its new version no longer holds, held back (unless `allow`)
        when any of its rows was rejected (`summary.rejected`: a page or row it could not
        read, or one refused); then the re-lettered items relabelled."""
        from librarian.store.versions import relabel, withdraw_missing

        rows = self.source.rows
        withdrawn = withdraw_missing(
            engine, rows.artifact_id, rows.chunk_ids, unread=summary.rejected, allow=allow
        ).lines()
        if self.source.previous:
            located = {
                str(item["chunk_id"]): str(item["locator"]["id"])
                for item in rows.items.values()
                if item.get("chunk_id") and item.get("locator", {}).get("id")
            }
            relabel(engine, rows.artifact_id, located)
        return withdrawn


def input_of(job: LinkJob, given: Source | None, engine: Engine | None) -> JobInput:
    """What `job` reads: a relink's open items, the source the command read already, its
    file, or the queue table; a document matched to its last stored version when the job
    commits."""
    if job.relink is not None:
        if engine is None:
            raise UsageError("a relink needs the database its source is stored in")
        return OpenItems(engine, job.relink, job.policy_given)
    if given is None and job.input_path is not None:
        given = file_source(job.input_path, job.source_name)
    if given is None:
        if engine is None:
            raise UsageError("draining the queue table needs a database (--db, or commit mode)")
        given = QueueTable(engine)
    if not isinstance(given, PlainFile):
        return Rows(given)
    if engine is None or not job.commits:
        return Document(given)
    from librarian.pipeline.aligned import Item
    from librarian.store.versions import last_version

    previous = tuple(Item(*stored) for stored in last_version(engine, given.artifact_id))
    return Document(given.matched_to(previous) if previous else given)


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
    read = input_of(job, hand_off.source, engine)
    source = read.source
    shown = redacted(job.database) if job.database else None
    mode = "commit" if job.commits else "dry-run"
    summary = new_summary(source.name, job.out_dir, job.settings, job.run_id, mode, shown)
    summary.reading = reading_of(source)
    started = time.perf_counter()
    hand_off.progress.phase("loading models")
    pipeline = read.decided_under(hand_off.pipeline or where.load(job.settings))
    add_timings(summary, {"load_models": time.perf_counter() - started})
    describe_pipeline(summary, pipeline, priors_read=engine is not None and read.reads_priors)
    stored_in = None
    if job.commits and engine is not None:
        digest, again = pipeline.models_digest, read.relinks_open
        stored_in = DatabaseSink(engine, job.run_id, source.name, digest, relink_open=again)
        store_policy(engine, job.run_id, pipeline.policy)
    names = {node.cre_id: node.name for node in pipeline.hub.nodes}
    with FileSink(job.out_dir, names) as files:
        summary.outputs = files.paths()
        sinks: list[Sink] = [stored_in, files] if stored_in is not None else [files]
        sinks += hand_off.watching
        store = (
            DatabaseStore(engine, pipeline.models_digest, read.document())
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
                summary.withdrawn = read.stored(engine, summary, job.settings.allow_withdraw)
            hand_off.progress.phase("writing")
        finally:
            spill.close()
        close_out(summary, stored_in.counts() if stored_in is not None else None)
        files.commit(summary)
    return summary
