"""The runner: the one place the stages run in order, over any source of batches.

    for each window of batches (a file: the whole file; the queue table: one claim)
      pass 1   each batch: admit (C.0-C.1, prior lookup), prepare (C.2-C.4, on the
               executor); what C.5 needs of its rows is kept in arrays (`CompactRows`),
               the rest of the batch waits in the spill; its lines count as done
      C.5      source by source: the source's rows linked as a whole, with what the
               store knows of it (`history`); each row's outcome goes to the spill
      pass 2   each batch in input order: complete (C.6-C.10, on the executor), then
               every sink, then the run's accounting

What varies is a seam: the `Executor` (in this process, or Prefect tasks on Dask), the
`Sink`s (files, the database), the `Store` (prior decisions and source history), the
`Progress`, the `Spill` (memory or a temporary file). The runner never knows which.

A batch whose prepare or complete fails is tried again, then row by row; a row that
prepares alone still joins C.5 with the rest of its source, so it gets the decision it
would have had. A row that fails alone becomes a PROCESSING_ERROR rejection; when every
row fails alone, the fault is not in the rows (a broken model) and the first error is
raised.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any, Generic, Protocol, TypeVar

from librarian.pipeline.accounting import add_timings, record_batch, record_sources
from librarian.pipeline.batches import Admitted, Prepared, PriorLookup, Priors, ReviewedRow
from librarian.pipeline.compact import CompactRows
from librarian.pipeline.dedup import ChunkRegistry
from librarian.pipeline.envelopes import RunContext
from librarian.pipeline.source_level import Linked, SlotRow
from librarian.pipeline.spill import MemorySpill, Spill
from librarian.schemas.records import (
    BatchResult,
    Claimed,
    Closable,
    EarlierItem,
    Finished,
    History,
    Known,
    PriorDecision,
    RawBatch,
    RejectCode,
    Rejection,
    RunSummary,
    Section,
    rejected,
)

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
ATTEMPTS = 2  # a batch is tried this often before its rows are tried one by one


class Pending(Protocol[T_co]):
    """A result the executor is working on (a Prefect future, or one already done)."""

    def result(self) -> T_co: ...


class SourceLinking(Protocol):
    """What the runner needs of C.5 (`source_phase.SourcePhase`)."""

    def slot_rows(self, prepared: Prepared) -> list[SlotRow]: ...

    def reviewed_rows(self, sources: Sequence[str], history: History) -> list[ReviewedRow]: ...

    def link_rows(
        self, rows: Sequence[SlotRow], reviewed: Sequence[ReviewedRow], history: History | None,
        earlier: Mapping[str, Sequence[EarlierItem]] | None,
    ) -> list[Linked]: ...  # fmt: skip


class Stages(Protocol):
    """What the runner needs of the stages (`pipeline.Pipeline`): it calls them in order
    and never knows what they are."""

    @property
    def hub_ids(self) -> tuple[str, ...]:
        """The hub's CRE ids, in the order of its vectors' columns."""
        ...

    def admit(
        self, raw: RawBatch, registry: ChunkRegistry, lookup: PriorLookup | None
    ) -> Admitted: ...

    def prepare(
        self, sections: Sequence[Section], ctx: RunContext, priors: Priors | None = None
    ) -> Prepared: ...

    @property
    def linking(self) -> SourceLinking:
        """C.5, between `prepare` and `complete`."""
        ...

    def complete(self, prepared: Prepared, linked: Sequence[Linked]) -> BatchResult: ...


@dataclass(frozen=True)
class Phase(Generic[T]):
    """A model step an executor runs: the `Stages` method `method` (a dotted path: one of
    C.5's is `linking.reviewed_rows`), with the arguments the runner gives it. Written
    once here; an executor runs any phase (`submit`), so a new phase is one line below and
    nothing in an executor."""

    method: str
    task: str  # its name where it runs as a task (the flow's Prefect tasks)

    def run(self, stages: Stages, *args: Any) -> T:
        step: Callable[..., T] = attrgetter(self.method)(stages)
        return step(*args)


PREPARE: Phase[Prepared] = Phase("prepare", "prepare-batch")  # C.2-C.4 of a batch
COMPLETE: Phase[BatchResult] = Phase("complete", "complete-batch")  # C.6-C.10, after C.5
# C.5's model work for one source: its reviewed items embedded and retrieved.
REVIEWED: Phase[list[ReviewedRow]] = Phase("linking.reviewed_rows", "embed-reviewed")
PHASES: tuple[Phase[Any], ...] = (PREPARE, COMPLETE, REVIEWED)


class Executor(Protocol):
    """Where the model stages run."""

    def submit(self, phase: Phase[T], *args: Any) -> Pending[T]:
        """`phase` with `args`, started (its result when asked)."""
        ...


class Sink(Protocol):
    stage: str  # what the summary's timings call its writing

    def write(self, batch: Finished) -> BatchResult:
        """Store or write `batch`; returns what it stored (rows it refused become
        rejections there), which the next sink writes."""
        ...


class Store(Protocol):
    """What the database knows: prior decisions, and of each source its history and the
    items earlier windows stored."""

    def lookup(
        self, raw: RawBatch, claim: Closable | None
    ) -> AbstractContextManager[PriorLookup]: ...

    def known(self, source: str, pending: Collection[str]) -> Known:
        """`pending`: the window's rows of `source` (their `CompactRows` key digests),
        which are no earlier item."""
        ...


class Progress(Protocol):
    """Told what a run is doing: its phase, and lines done, each line once."""

    def phase(self, name: str) -> None: ...

    def advance(self, lines: int) -> None: ...


class _Done(Generic[T]):
    def __init__(self, run: Callable[[], T]) -> None:
        try:
            self._value: T | None = run()
            self._error: BaseException | None = None
        except Exception as exc:
            self._value, self._error = None, exc

    def result(self) -> T:
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


@dataclass(frozen=True)
class InProcess:
    """The executor that runs each step here, at once."""

    pipeline: Stages

    def submit(self, phase: Phase[T], *args: Any) -> Pending[T]:
        return _Done(lambda: phase.run(self.pipeline, *args))


class Silent:
    """A `Progress` told nothing: no one is watching."""

    def phase(self, name: str) -> None:
        pass

    def advance(self, lines: int) -> None:
        pass


@dataclass
class _Held:
    """A batch between the passes: what stays in memory (its claim, its counts); the
    rest waits in the spill."""

    number: int
    lines: int  # its lines, blank ones too
    claim: Closable | None  # the queue claim's transaction, held until the batch is stored
    parts: int = 0
    failed: list[Rejection] = field(default_factory=list)  # rows that failed alone

    def close(self) -> None:
        if self.claim is not None:
            self.claim.close()


@dataclass
class _Window:
    held: list[_Held]
    compact: CompactRows


@dataclass
class Runner:
    """Runs `pipeline` over batches, window by window (module docstring)."""

    pipeline: Stages
    executor: Executor
    summary: RunSummary
    sinks: Sequence[Sink] = ()
    store: Store | None = None
    progress: Progress = field(default_factory=Silent)
    spill: Spill = field(default_factory=MemorySpill)
    # Batches kept in flight while the runner takes the oldest: 0 takes each as soon as it
    # is given (this process's thread pool: its encoder already uses every core, and a
    # second batch at once only contended for them); Dask's workers want several.
    in_flight: int = 0
    log: Callable[[str], None] | None = None
    registry: ChunkRegistry = field(default_factory=ChunkRegistry)
    _numbers: Iterator[int] = field(default_factory=itertools.count)

    def run(self, batches: Iterable[RawBatch | Claimed | Admitted], ctx: RunContext) -> None:
        """Admit each raw batch (C.0-C.1, the prior lookup) and link them all; a batch
        given admitted (sections read already: eval, explain, relink) goes straight on."""
        admitted = (self._admit(b) for b in batches)
        self._run_admitted(admitted, ctx)

    def _run_admitted(
        self, batches: Iterable[tuple[Admitted, Closable | None]], ctx: RunContext
    ) -> None:
        window = self._window()
        flying: deque[tuple[_Held, Admitted, Pending[Prepared], CompactRows]] = deque()
        try:
            for admitted, claim in _timed(batches, self, "read_validate"):
                raw = admitted.raw
                held = _Held(next(self._numbers), len(raw.lines) + raw.blank_lines, claim)
                window.held.append(held)
                self.spill.put("admitted", [((held.number, 0, 0), admitted)])
                prepared = self.executor.submit(PREPARE, admitted.sections, ctx, admitted.priors)
                flying.append((held, admitted, prepared, window.compact))
                closes = claim is not None or admitted.raw.eof
                while flying and (closes or len(flying) > self.in_flight):
                    self._absorb(*flying.popleft(), ctx)
                if closes:
                    self._close(window)
                    window = self._window()
            while flying:
                self._absorb(*flying.popleft(), ctx)
            if window.held:
                self._close(window)
        finally:
            for held in window.held:  # a failure leaves later batches unstored, unconsumed
                held.close()

    def _window(self) -> _Window:
        return _Window([], CompactRows(self.pipeline.hub_ids))

    def _admit(self, batch: RawBatch | Claimed | Admitted) -> tuple[Admitted, Closable | None]:
        """The batch admitted, and its queue claim (held until the batch is stored)."""
        if isinstance(batch, Admitted):
            return batch, None
        raw, claim = (batch.raw, batch.claim) if isinstance(batch, Claimed) else (batch, None)
        lookup = self.store.lookup(raw, claim) if self.store is not None else nullcontext(None)
        with lookup as priors:
            return self.pipeline.admit(raw, self.registry, priors), claim

    # -- pass 1 ------------------------------------------------------------------------

    def _absorb(
        self,
        held: _Held,
        admitted: Admitted,
        pending: Pending[Prepared],
        compact: CompactRows,
        ctx: RunContext,
    ) -> None:
        """A prepared batch: its rows compacted, the rest spilled, its lines counted."""
        started = time.perf_counter()
        parts = self._prepared(admitted, pending, ctx, held)
        self._time("wait_for_prepare", started)
        for part, prepared in enumerate(parts):
            compact.add(held.number, part, self.pipeline.linking.slot_rows(prepared))
        self.spill.put("prepared", (((held.number, p, 0), x) for p, x in enumerate(parts)))
        held.parts = len(parts)
        self.progress.advance(held.lines)

    def _prepared(
        self, admitted: Admitted, pending: Pending[Prepared], ctx: RunContext, held: _Held
    ) -> list[Prepared]:
        """The batch prepared whole, or, after ATTEMPTS, row by row."""
        sections, priors = admitted.sections, admitted.priors
        try:
            return [_retried(pending, lambda: self.executor.submit(PREPARE, sections, ctx, priors))]
        except Exception as error:
            alone = [self.executor.submit(PREPARE, [s], ctx, priors) for s in sections]
            return _survivors(sections, alone, held.failed, error)

    # -- C.5 -------------------------------------------------------------------------

    def _close(self, window: _Window) -> None:
        """C.5 over the window, source by source; then pass 2."""
        started = time.perf_counter()
        compact = window.compact
        statuses: dict[str, dict[str, Any]] = {}
        for number, source in enumerate(compact.sources):
            places, rows = compact.rows_of(source)
            outcomes = self._link_source(source, rows)
            # One value a part and source: pickled together, its rows share their status.
            by_part: dict[tuple[int, int], list[tuple[int, Linked]]] = {}
            for (batch, part, row), outcome in zip(places, outcomes, strict=True):
                by_part.setdefault((batch, part), []).append((row, outcome))
            self.spill.put("linked", (((*at, number), v) for at, v in by_part.items()))
            for status in {id(o.status): o.status for o in outcomes}.values():
                statuses[status.source] = status.as_json()
        record_sources(self.summary, statuses)
        self._time("source_level", started)
        if len(window.held) > 1:  # every line counted already: say what the wait is for
            self.progress.phase("completing")
        self._pass_two(window.held)
        window.held.clear()

    def _link_source(self, source: str, rows: list[SlotRow]) -> list[Linked]:
        """C.5 for one source: its reviewed items' model work on the executor (a Dask
        worker, say), then the joint linking here."""
        if self.store is None:
            return self.pipeline.linking.link_rows(rows, (), None, None)
        known = self.store.known(source, {row.key for row in rows})
        if known.history is None:
            return self.pipeline.linking.link_rows(rows, (), {}, {source: known.earlier})
        history = {source: known.history}
        reviewed: list[ReviewedRow] = []
        if known.history.reviewed:  # no decided item: no model work, no task to send
            reviewed = _retried(
                self.executor.submit(REVIEWED, [source], history),
                lambda: self.executor.submit(REVIEWED, [source], history),
            )
        return self.pipeline.linking.link_rows(rows, reviewed, history, {source: known.earlier})

    # -- pass 2 ------------------------------------------------------------------------

    def _pass_two(self, window: Sequence[_Held]) -> None:
        """Each batch completed (`in_flight` at once), then sunk and counted in order."""
        flying: deque[tuple[_Held, Admitted, list[_Part]]] = deque()
        for held in window:
            (admitted,) = self.spill.take("admitted", held.number, 0)
            parts = []
            for part in range(held.parts):
                (prepared,) = self.spill.take("prepared", held.number, part)
                linked = _in_row_order(self.spill.take("linked", held.number, part))
                parts.append(
                    _Part(prepared, linked, self.executor.submit(COMPLETE, prepared, linked))
                )
            flying.append((held, admitted, parts))
            while len(flying) > self.in_flight:
                self._finish(*flying.popleft())
        while flying:
            self._finish(*flying.popleft())

    def _finish(self, held: _Held, admitted: Admitted, parts: list[_Part]) -> None:
        started = time.perf_counter()
        result = BatchResult(envelopes=[], explicit=0, truncated=0)
        for part in parts:
            for done in self._completed(part, held):
                result.merge(done)
        result.rejections.extend(held.failed)
        result = admitted.complete(result)
        self._time("wait_for_link", started)
        batch = Finished(admitted.raw, admitted.sections, result, held.claim)
        for sink in self.sinks:
            started = time.perf_counter()
            batch = replace(batch, result=sink.write(batch))
            self._time(sink.stage, started)
        result = batch.result
        raw = admitted.raw
        record_batch(self.summary, raw, result, result.rejections, result.skips)
        held.close()
        if self.log is not None:
            s = self.summary
            self.log(
                f"batch {s.batches}: {len(raw.lines)} lines (linked {s.linked}, review "
                f"{s.review}, rejected {s.rejected}, skipped {s.skipped} so far)"
            )

    def _completed(self, part: _Part, held: _Held) -> list[BatchResult]:
        """The part completed whole, or, after ATTEMPTS, row by row."""
        again = lambda: self.executor.submit(COMPLETE, part.prepared, part.linked)  # noqa: E731
        try:
            return [_retried(part.pending, again)]
        except Exception as error:
            rows = part.prepared.rows(part.linked)
            alone = [self.executor.submit(COMPLETE, one, linked) for one, linked in rows]
            sections = [one.sections[0] for one, _ in rows]
            return _survivors(sections, alone, held.failed, error)

    def _time(self, stage: str, started: float) -> None:
        add_timings(self.summary, {stage: time.perf_counter() - started})


@dataclass(frozen=True)
class _Part:
    prepared: Prepared
    linked: list[Linked]
    pending: Pending[BatchResult]


def _timed(items: Iterable[T], runner: Runner, stage: str) -> Iterator[T]:
    """`items`, the time spent making each one counted as `stage`."""
    iterator = iter(items)
    while True:
        started = time.perf_counter()
        item = next(iterator, None)
        runner._time(stage, started)
        if item is None:
            return
        yield item


def _in_row_order(shares: list[list[tuple[int, Linked]]]) -> list[Linked]:
    return [linked for _, linked in sorted((p for share in shares for p in share), key=_row)]


def _row(placed: tuple[int, Linked]) -> int:
    return placed[0]


def _retried(first: Pending[T], again: Callable[[], Pending[T]]) -> T:
    """`first`'s result; if it fails, up to ATTEMPTS in all; the last error raised."""
    pending = first
    for attempt in range(ATTEMPTS):
        try:
            return pending.result()
        except Exception:
            if attempt == ATTEMPTS - 1:
                raise
            pending = again()
    raise AssertionError("unreachable")


def _survivors(
    sections: Sequence[Section],
    pending: Sequence[Pending[T]],
    failed: list[Rejection],
    error: Exception,
) -> list[T]:
    """Each row's result where it has one; a row that failed alone is rejected (into
    `failed`); when every row failed alone, the batch's own `error` is raised."""
    out: list[T] = []
    for section, one in zip(sections, pending, strict=True):
        try:
            out.append(one.result())
        except Exception as exc:
            why = f"linking failed: {type(exc).__name__}: {exc}"
            failed.append(
                rejected(section.line, RejectCode.PROCESSING_ERROR, why, section.chunk_id)
            )
    if sections and not out:
        raise error
    return out


@dataclass(frozen=True)
class RunParts:
    """Where a run's work goes: the seams the runner is given (module docstring). The
    defaults: every step in this process, no sink, no store, nothing told, in memory."""

    executor: Executor | None = None  # None: `InProcess`
    sinks: Sequence[Sink] = ()
    store: Store | None = None
    progress: Progress | None = None
    spill: Spill | None = None
    in_flight: int = 0
    registry: ChunkRegistry | None = None
    log: Callable[[str], None] | None = None


def run_source(
    stages: Stages,
    batches: Iterable[RawBatch | Claimed | Admitted],
    ctx: RunContext,
    summary: RunSummary,
    parts: RunParts | None = None,
) -> RunSummary:
    """The one way a run is made, whoever asks (the flow, `link_sections`, `relink`, the
    benchmarks): `batches` linked by the runner through `parts`, counted in `summary`."""
    parts = parts or RunParts()
    runner = Runner(
        stages,
        parts.executor or InProcess(stages),
        summary,
        sinks=parts.sinks,
        store=parts.store,
        progress=parts.progress or Silent(),
        spill=parts.spill or MemorySpill(),
        in_flight=parts.in_flight,
        log=parts.log,
        registry=parts.registry or ChunkRegistry(),
    )
    runner.run(batches, ctx)
    return summary


def link_sections(
    stages: Stages,
    sections: Sequence[Section],
    ctx: RunContext,
    priors: Mapping[str, PriorDecision] | None = None,
    history: History | None = None,
) -> BatchResult:
    """`sections` (already admitted) as one window of one batch, in this process: what
    `Pipeline.link` (eval, explain, training, the suggest API) returns."""
    collected = Collected()
    summary = RunSummary(run_id=ctx.run_id, mode="dry-run", input="", out_dir="", started_at="")
    store = GivenHistory(history) if history is not None else None
    known = dict(priors) if priors is not None else None
    admitted = Admitted(RawBatch([], 0, 0, 0, eof=True), list(sections), [], [], known)
    run_source(stages, [admitted], ctx, summary, RunParts(sinks=[collected], store=store))
    return collected.result


class Collected:
    """A sink that keeps the last batch's result (a run of one batch: its result)."""

    stage = "collect"

    def __init__(self) -> None:
        self.result = BatchResult(envelopes=[], explicit=0, truncated=0)

    def write(self, batch: Finished) -> BatchResult:
        self.result = batch.result
        return batch.result


@dataclass(frozen=True)
class GivenHistory:
    """A store that knows only the history it was given (no prior decisions to read, no
    earlier items)."""

    given: History

    def lookup(self, raw: RawBatch, claim: Closable | None) -> AbstractContextManager[PriorLookup]:
        raise NotImplementedError("sections given to link are admitted already")

    def known(self, source: str, pending: Collection[str]) -> Known:
        return Known(self.given.get(source))
