"""The runner (`pipeline/run.py`): one outcome per row through admission, priors and the
source-level step; progress once per line; a failed batch gets the decisions it would have
had; the outcome does not depend on the batch size or where batches wait."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from librarian.pipeline.dedup import ChunkRegistry
from librarian.pipeline.envelopes import RunContext
from librarian.pipeline.pipeline import Pipeline
from librarian.pipeline.run import (
    COMPLETE,
    PREPARE,
    REVIEWED,
    InProcess,
    Pending,
    Phase,
    Runner,
    Sink,
)
from librarian.pipeline.sources import JsonlFile
from librarian.pipeline.spill import DiskSpill, MemorySpill, Spill
from librarian.policy import DecisionPolicy
from librarian.schemas.envelopes import ReasonCode, ReviewItem, dump_envelope
from librarian.schemas.records import (
    BatchResult,
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
)
from librarian.store.sink import DatabaseStore
from tests.rows import queue_line
from tests.stubs import Priors, Recorder, joint_pipeline, small_hub, stub_pipeline

TEXTS = [
    "rotate the session token after login",
    "use parameterized queries",
    "session tokens expire after idle time",
    "bind variables in every SQL statement",
    "log out invalidates the session",
    "escape output for the HTML context",
    "regenerate session identifiers on privilege change",
    "prepared statements for database access",
    "hash passwords with a slow function",
    "encrypt data in transit with TLS",
    "cookies carry the secure flag",
    "validate input lengths on the server",
]


def queue_file(tmp_path: Path, blank_every: int = 0) -> Path:
    lines = []
    for i, text in enumerate(TEXTS):
        lines.append(queue_line(f"c{i}", f"doc/{i}.md", text))
        if blank_every and i % blank_every == 0:
            lines.append("")
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


class Collect:
    stage = "collect"

    def __init__(self) -> None:
        self.batches: list[BatchResult] = []

    def write(self, batch: Finished) -> BatchResult:
        self.batches.append(batch.result)
        return batch.result

    def envelopes(self) -> list[str]:
        return [json.dumps(dump_envelope(e)) for b in self.batches for e in b.envelopes]


@dataclass
class Counted:
    lines: list[int] = field(default_factory=list)

    def phase(self, name: str) -> None:
        pass

    def advance(self, lines: int) -> None:
        self.lines.append(lines)


StepT = TypeVar("StepT")


class Flaky(InProcess):
    """Fails every multi-row step of the kind named (`prepare` or `complete`)."""

    def __init__(self, pipeline: Pipeline, failing: str, poison: str | None = None) -> None:
        super().__init__(pipeline)
        object.__setattr__(self, "failing", failing)
        object.__setattr__(self, "poison", poison)
        object.__setattr__(self, "calls", [])

    def _fails(self, kind: str, sections: list[Section]) -> bool:
        self.calls.append((kind, len(sections)))  # type: ignore[attr-defined]
        if kind != self.failing:  # type: ignore[attr-defined]
            return False
        poisoned = any(self.poison and self.poison in s.text for s in sections)  # type: ignore[attr-defined]
        return len(sections) > 1 or poisoned

    def submit(self, phase: Phase[StepT], *args: Any) -> Pending[StepT]:
        if phase == PREPARE and self._fails("prepare", args[0]):
            return _Failed(RuntimeError(f"prepare failed on {len(args[0])} rows"))
        if phase == COMPLETE and self._fails("complete", args[0].sections):
            return _Failed(RuntimeError(f"complete failed on {len(args[0].sections)} rows"))
        return super().submit(phase, *args)


class _Failed:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def result(self) -> Any:
        raise self.error


@dataclass
class Store:
    priors: Priors | None = None
    histories: History = field(default_factory=dict)
    earlier: dict[str, list[EarlierItem]] = field(default_factory=dict)

    @contextmanager
    def lookup(self, raw: RawBatch, claim: Closable | None) -> Iterator[Priors]:
        assert self.priors is not None
        yield self.priors

    def known(self, source: str, pending: Collection[str]) -> Known:
        return Known(self.histories.get(source), tuple(self.earlier.get(source, ())))


def run(
    path: Path,
    pipeline: Pipeline,
    batch_size: int,
    executor: InProcess | None = None,
    spill: Spill | None = None,
    progress: Counted | None = None,
    store: Store | DatabaseStore | None = None,
    in_flight: int = 1,
    sinks: Sequence[Sink] = (),
) -> tuple[Collect, RunSummary]:
    collect = Collect()
    summary = RunSummary(run_id="r", input=str(path), out_dir="", started_at="")
    runner = Runner(
        pipeline,
        executor or InProcess(pipeline),
        summary,
        sinks=[*sinks, collect],
        store=store,
        progress=progress or Counted(),
        spill=spill or MemorySpill(),
        in_flight=in_flight,
    )
    try:
        runner.run(
            JsonlFile(path).batches(batch_size),
            RunContext("r", DecisionPolicy(global_cut=0.9), NOW),
        )
    finally:
        runner.spill.close()
    return collect, summary


NOW = __import__("datetime").datetime(2026, 12, 2, tzinfo=__import__("datetime").UTC)


def test_one_outcome_per_row_through_admission_priors_and_the_source(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    lines = [
        queue_line("c1", "a.md", "never rotate the session token after login"),
        queue_line("c2", "b.md", "use parameterized queries"),
        "not json",
        queue_line("c1", "a.md", "never rotate the session token after login"),
    ]
    path.write_text("\n".join(lines) + "\n")
    pipeline = stub_pipeline(threshold=0.1)
    first = next(JsonlFile(path).batches(10))
    probe = pipeline.admit(first, ChunkRegistry(), None).sections
    prior = PriorDecision("old", "rotate the session token after login", "200-001")
    store = Store(Priors("c2", prior, probe[0].span_key))
    collect, summary = run(path, pipeline, 10, store=store)
    (result,) = collect.batches
    lines_seen = sorted([s.line for s in result.skips] + [r.line for r in result.rejections] + [1])
    assert lines_seen == [1, 2, 3, 4]  # c1 decided, c2 already decided, a bad line, a repeat
    (envelope,) = result.envelopes
    assert isinstance(envelope, ReviewItem) and envelope.reason_code == ReasonCode.ADVERSARIAL_FLAG
    assert envelope.update_detection.is_update and envelope.update_detection.prior_chunk_id == "old"
    assert all(isinstance(r, Rejection) for r in result.rejections)
    assert (summary.read, summary.review, summary.rejected, summary.skipped) == (4, 1, 1, 2)


@pytest.mark.parametrize("in_flight", [0, 1, 3])
def test_progress_counts_every_line_once_over_several_batches(
    tmp_path: Path, in_flight: int
) -> None:
    path = queue_file(tmp_path, blank_every=4)
    counted = Counted()
    _, summary = run(path, stub_pipeline(), 5, progress=counted, in_flight=in_flight)
    assert summary.batches == 3
    assert sum(counted.lines) == len(path.read_text().splitlines()) == summary.lines_total
    assert len(counted.lines) == summary.batches  # each batch told once


@pytest.mark.parametrize("failing", ["prepare", "complete"])
def test_a_failed_batch_gets_the_decisions_it_would_have_had(tmp_path: Path, failing: str) -> None:
    path = queue_file(tmp_path)
    clean, _ = run(path, joint_pipeline(), 4)
    pipeline = joint_pipeline()
    flaky = Flaky(pipeline, failing)
    failed, summary = run(path, pipeline, 4, executor=flaky)
    calls = flaky.calls  # type: ignore[attr-defined]
    assert (failing, 4) in calls and (failing, 1) in calls  # it did fail, then alone
    assert summary.rejected == 0
    assert failed.envelopes() == clean.envelopes()
    assert "alone" not in failed.envelopes()[0]  # linked with the rest of its source


@pytest.mark.parametrize("failing", ["prepare", "complete"])
def test_a_row_that_fails_alone_is_rejected_and_the_rest_linked(
    tmp_path: Path, failing: str
) -> None:
    path = queue_file(tmp_path)
    pipeline = joint_pipeline()
    collect, summary = run(path, pipeline, 4, executor=Flaky(pipeline, failing, poison="TLS"))
    rejected = [r for b in collect.batches for r in b.rejections]
    assert [r.reason for r in rejected] == [RejectCode.PROCESSING_ERROR]
    assert rejected[0].chunk_id == "c9" and "failed" in rejected[0].message
    assert summary.review + summary.linked == len(TEXTS) - 1


def test_when_every_row_fails_alone_the_run_fails(tmp_path: Path) -> None:
    path = queue_file(tmp_path)
    pipeline = joint_pipeline()
    with pytest.raises(RuntimeError, match="prepare failed on 4 rows"):
        run(path, pipeline, 4, executor=Flaky(pipeline, "prepare", poison=" "))


@pytest.mark.parametrize("batch_size", [1, 5, 100])
def test_the_outcome_does_not_depend_on_the_batch_size_or_the_spill(
    tmp_path: Path, batch_size: int
) -> None:
    path = queue_file(tmp_path, blank_every=3)
    whole, _ = run(path, joint_pipeline(), 100)
    spill = DiskSpill(tmp_path, keep=0)  # every value through the file
    spilled, summary = run(path, joint_pipeline(), batch_size, spill=spill)
    assert spilled.envelopes() == whole.envelopes()
    assert summary.sources and all(s["linked_as_whole"] for s in summary.sources.values())
    assert not list(tmp_path.glob("librarian-spill-*"))  # the spill removes itself


def queue_part(tmp_path: Path, name: str, indices: range) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(queue_line(f"c{i}", f"doc/{i}.md", TEXTS[i]) for i in indices) + "\n")
    return path


def test_a_later_window_is_linked_with_the_sources_earlier_stored_items(tmp_path: Path) -> None:
    """Rows of one source arriving in two windows (two queue claims, say) get what one
    window of all of them gives: the second links its rows with the first's stored ones."""
    from librarian.store.db import make_engine, upgrade
    from librarian.store.sink import DatabaseSink, DatabaseStore

    def store_at(name: str) -> tuple[DatabaseStore, DatabaseSink]:
        engine = make_engine(f"sqlite:///{tmp_path / name}")
        upgrade(engine)
        digest = pipeline.models_digest
        return DatabaseStore(engine, digest), DatabaseSink(engine, "r", "test", digest)

    pipeline = joint_pipeline()
    whole_store, whole_sink = store_at("whole.db")
    whole, _ = run(queue_file(tmp_path), pipeline, 100, store=whole_store, sinks=[whole_sink])
    store, sink = store_at("parts.db")
    first, _ = run(
        queue_part(tmp_path, "a.jsonl", range(8)), pipeline, 100, store=store, sinks=[sink]
    )
    second, summary = run(queue_part(tmp_path, "b.jsonl", range(8, 12)), pipeline, 100, store=store)
    assert second.envelopes() == whole.envelopes()[8:]
    assert first.envelopes() != whole.envelopes()[:8]  # linked without the rest, as stored
    assert summary.sources["github:o/r"]["items"] == len(TEXTS)


@pytest.mark.parametrize("keep", [0, 1, 100])
def test_the_spill_gives_each_part_back_once_in_row_order(tmp_path: Path, keep: int) -> None:
    spill = DiskSpill(tmp_path, keep=keep)  # the first `keep` batches in memory
    for batch in (0, 1):
        spill.put("x", [((batch, 0, 3), "d"), ((batch, 0, 1), "b"), ((batch, 1, 0), "part 1")])
        spill.put("x", [((batch, 0, 0), "a"), ((batch, 0, 2), {"c": [1.5]})])
    for batch in (0, 1):
        assert spill.take("x", batch, 0) == ["a", "b", {"c": [1.5]}, "d"]
        assert spill.take("x", batch, 0) == []
        assert spill.take("x", batch, 1) == ["part 1"]
    spill.close()
    assert not list(tmp_path.iterdir())


def test_the_chunk_registry_on_disk_admits_as_the_one_in_memory(tmp_path: Path) -> None:
    """A run keeps the registry (every chunk id it saw) in its spill file, not in memory."""
    from librarian.pipeline.dedup import ChunkRegistry

    path = tmp_path / "dups.jsonl"
    lines = [
        queue_line("c1", "a.md", "rotate the session token"),
        queue_line("c1", "a.md", "rotate the session token"),  # the same chunk again
        queue_line("c2", "a.md", "rotate the session token"),  # the same span and text, another id
        queue_line("c1", "a.md", "never rotate the session token"),  # the chunk with other text
        queue_line("c3", "b.md", "use parameterized queries"),
    ]
    path.write_text("\n".join(lines) + "\n")
    outcomes = []
    for registry in (ChunkRegistry(), None):
        spill = DiskSpill(tmp_path, keep=0)
        if registry is None:
            registry = ChunkRegistry(spill.mapping("seen"), spill.mapping("spans"))
        pipeline = stub_pipeline()
        summary = RunSummary(run_id="r", input="", out_dir="", started_at="")
        collect = Collect()
        runner = Runner(pipeline, InProcess(pipeline), summary, [collect], registry=registry)
        runner.spill = spill
        runner.run(JsonlFile(path).batches(2), RunContext("r", DecisionPolicy(global_cut=0.9), NOW))
        kept = {k: registry.seen[k] for k in registry.seen}
        spill.close()
        notes = [(n.line, n.model_dump_json()) for b in collect.batches for n in b.skips]
        notes += [(n.line, n.model_dump_json()) for b in collect.batches for n in b.rejections]
        outcomes.append((sorted(notes), collect.envelopes(), kept))
    assert outcomes[0] == outcomes[1]
    assert len(outcomes[0][0]) == 3 and set(outcomes[0][2]) == {"c1", "c3"}


class Watched(InProcess):
    """In this process, saying when the runner is inside one of the executor's steps, and
    failing C.5's model work once (as a lost Dask worker would): it is retried as every
    other step is."""

    def __init__(self, pipeline: Pipeline) -> None:
        super().__init__(pipeline)
        object.__setattr__(self, "asked", [])
        object.__setattr__(self, "inside", False)

    def _step(self, work: Callable[[], StepT]) -> StepT:
        object.__setattr__(self, "inside", True)
        try:
            return work()  # InProcess runs a step at once
        finally:
            object.__setattr__(self, "inside", False)

    def submit(self, phase: Phase[StepT], *args: Any) -> Pending[StepT]:
        if phase == REVIEWED:
            self.asked.extend(args[0])  # type: ignore[attr-defined]
            if len(self.asked) == 1:  # type: ignore[attr-defined]
                return _Failed(RuntimeError("worker lost"))
        return self._step(lambda: super(Watched, self).submit(phase, *args))


NO_PRIORS = Priors("none", PriorDecision("p", "nothing decided before", None), "no span")


def test_a_sources_reviewed_items_are_embedded_on_the_executor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 39, item 4: C.5's model work (the reviewed items' embed and retrieve) goes
    through the executor, as prepare and complete do: the runner's own process embeds
    nothing, and the decisions are what they were."""
    from librarian.schemas.records import Reviewed, SourceHistory

    pipeline = joint_pipeline()
    decided = Reviewed("k-1", TEXTS[0], None, (small_hub().ids[0],))
    histories = {"github:o/r": SourceHistory(frozenset(), (decided,))}
    before, _ = run(queue_file(tmp_path), pipeline, 100, store=Store(NO_PRIORS, histories))
    watched = Watched(pipeline)
    embedded: list[tuple[int, bool]] = []  # (texts, inside an executor step)
    real_run = pipeline.embed.embed

    def counted(sections: Any) -> Any:
        embedded.append((len(sections), watched.inside))  # type: ignore[attr-defined]
        return real_run(sections)

    monkeypatch.setattr(pipeline.embed, "embed", counted)
    after, _ = run(
        queue_file(tmp_path), pipeline, 100, executor=watched, store=Store(NO_PRIORS, histories)
    )
    assert watched.asked == ["github:o/r", "github:o/r"]  # type: ignore[attr-defined]
    assert (1, True) in embedded and all(inside for _, inside in embedded)
    assert after.envelopes() == before.envelopes()


def test_a_source_with_no_decided_item_sends_no_model_work(tmp_path: Path) -> None:
    """What it links is all a source's history holds: nothing to embed, no task sent."""
    from librarian.schemas.records import SourceHistory

    pipeline = joint_pipeline()
    histories = {"github:o/r": SourceHistory(frozenset({small_hub().ids[0]}), ())}
    watched = Watched(pipeline)
    run(queue_file(tmp_path), pipeline, 100, executor=watched, store=Store(NO_PRIORS, histories))
    assert watched.asked == []  # type: ignore[attr-defined]


def test_two_batches_never_encode_at_once_in_one_process() -> None:
    """Issue 49, item 8: the flow's thread pool prepares the next batch while the runner
    takes the last; two encodes at once oversubscribed the encoder's threads (the CLI run
    was 0.74x its encoder alone). One encode at a time; the rest of a batch overlaps."""
    import threading
    import time

    from librarian.pipeline.ingest import section_from_text
    from librarian.pipeline.stages import EmbedStage
    from tests.stubs import StubEmbedder

    inside, most = 0, 0
    guard = threading.Lock()

    class Slow(StubEmbedder):
        def encode(self, texts: Any) -> Any:
            nonlocal inside, most
            with guard:
                inside += 1
                most = max(most, inside)
            time.sleep(0.05)
            with guard:
                inside -= 1
            return super().encode(texts)

    stage = EmbedStage(Slow())
    sections = [section_from_text(t) for t in TEXTS[:2]]
    threads = [threading.Thread(target=stage.embed, args=(sections,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most == 1


@given(
    st.lists(
        st.lists(st.integers(0, 6), min_size=1, max_size=12),  # a part's rows' sources
        min_size=1,
        max_size=8,
    )
)
def test_compact_rows_give_each_source_its_rows_in_input_order(parts: list[list[int]]) -> None:
    """C.5 takes one source's rows at a time from the window (`CompactRows.rows_of`): each
    of its rows once, in input order, with the (batch, part, row) it came from, however
    its rows are spread over the parts; a part added after a lookup is found too."""
    from librarian.pipeline.compact import CompactRows
    from librarian.pipeline.source_level import SlotRow
    from librarian.retrieval.flat import ScoredHub

    hubs = ["101-101", "202-202"]
    compact = CompactRows(hubs)
    expected: dict[str, list[tuple[int, int, int]]] = {}
    for batch, sources in enumerate(parts):
        rows = [
            SlotRow(f"s{s}", f"k{batch}.{i}", f"t{batch}.{i}", [ScoredHub(hubs[i % 2], 0.5)], None)
            for i, s in enumerate(sources)
        ]
        for i, s in enumerate(sources):
            expected.setdefault(f"s{s}", []).append((batch, 0, i))
        compact.add(batch, 0, rows)
        if batch == 0:
            compact.rows_of(rows[0].source)  # a lookup before the other parts came
    assert compact.sources == list(expected)
    for source, places in expected.items():
        got, rows = compact.rows_of(source)
        assert got == places
        assert [r.source for r in rows] == [source] * len(places)
        assert [r.hits[0].cre_id for r in rows] == [hubs[i % 2] for _, _, i in places]


def test_a_run_sets_the_collector_for_its_rows_and_back() -> None:
    """The launch moves what is loaded out of the cyclic collector's sight and collects
    its youngest generation less often while a run makes its rows; after, as it was."""
    import gc

    from librarian.flows.launch import RUN_COLLECTOR_THRESHOLD, collector_for_a_run

    before = gc.get_threshold()
    with collector_for_a_run():
        assert gc.get_threshold() == (RUN_COLLECTOR_THRESHOLD, *before[1:])
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_a_digest_that_ends_in_a_zero_byte_comes_back_whole() -> None:
    """C.5 keeps each row's key and text as 16-byte digests in a fixed-width array, which
    NumPy reads back without trailing zero bytes; the row it gives back has the digest
    the store computes, so the cut's evidence knows the item (a 39-item policy's X.b was
    left out of its own review plan: 'reviewing all 38')."""
    from librarian.pipeline.compact import CompactRows
    from librarian.pipeline.source_level import SlotRow, normalised
    from librarian.retrieval.flat import ScoredHub
    from librarian.text import key_digest

    key = next(f"k{i}" for i in range(100_000) if key_digest(f"k{i}").endswith("00"))
    text = next(f"t{i}" for i in range(100_000) if key_digest(normalised(f"t{i}")).endswith("00"))
    compact = CompactRows(["101-101"])
    compact.add(0, 0, [SlotRow("s", key, text, [ScoredHub("101-101", 0.5)], None)])
    _, (row,) = compact.rows_of("s")
    assert row.key == key_digest(key)
    assert row.text == key_digest(normalised(text))


def test_every_phase_is_a_stage_and_every_executor_runs_it() -> None:
    """Issue 57: the phases were mirrored five times (`Stages`, `Executor`, `InProcess`,
    `PrefectTasks`, three tasks). Each is written once now (`pipeline.run.PHASES`): it
    names a method of the stages, and an executor runs any phase it is given. This fails
    when a phase names no stage or an executor cannot run one (the flow's executor:
    tests/integration/test_flow.py)."""
    from librarian.pipeline.run import PHASES, SourceLinking, Stages

    pipeline = stub_pipeline()
    for phase in PHASES:
        first, *rest = phase.method.split(".")
        assert first in vars(Stages), phase
        assert all(name in vars(SourceLinking) for name in rest), phase  # C.5's: `linking.`
        assert callable(attrgetter(phase.method)(pipeline)), phase
        got = InProcess(Recorder()).submit(phase, 1, "two")  # type: ignore[arg-type]
        assert got.result() == (phase.method, (1, "two"))
    assert len({p.method for p in PHASES}) == len({p.task for p in PHASES}) == len(PHASES)
