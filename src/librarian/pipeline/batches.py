"""The records a batch is carried in between the stages, the stages' two seams, and what
the runner needs of a store's prior decisions: an admitted batch (after C.0-C.1), a
prepared one (after C.2-C.4: `PrepareStage`s fold over it), a completing one (C.6-C.10:
`CompleteStage`s fold over it, a `ScoredRow` a model row). The stages (`stages.py`,
`emit.py`) fill them; `pipeline.py` folds its stage lists over them; the runner
(`run.py`) carries them."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from librarian.models.seams import Vectors
from librarian.pipeline.components import Component
from librarian.pipeline.envelopes import RunContext
from librarian.pipeline.safety import SafetyVerdict
from librarian.pipeline.source_level import Linked, SlotRow
from librarian.policy.verdict import Decision
from librarian.retrieval.flat import ScoredHub
from librarian.schemas.envelopes import Candidate, Envelope
from librarian.schemas.records import (
    BatchResult,
    DecisionFacts,
    PriorDecision,
    RawBatch,
    Rejection,
    Section,
    Skip,
)
from librarian.schemas.routing import RoutingDecision

Priors = Mapping[str, PriorDecision]  # by span key
# A source's decided item as C.5 reads it: retrieved as it is now, and the CREs chosen.
ReviewedRow = tuple[SlotRow, tuple[str, ...]]


class PriorLookup(Protocol):
    """Where prior decisions are read (the store): sections already decided with the same
    text (skipped), and the latest decision of each span (for update detection)."""

    def unchanged(self, sections: Sequence[Section]) -> list[Skip]: ...

    def priors(self, sections: Sequence[Section]) -> dict[str, PriorDecision]: ...


@dataclass
class Admitted:
    """A batch after C.0-C.1 and the prior lookup: what goes on to the models.
    `priors` None: nothing to read prior decisions from (update detection not evaluated)."""

    raw: RawBatch
    sections: list[Section]
    rejections: list[Rejection]
    skips: list[Skip]
    priors: dict[str, PriorDecision] | None

    def complete(self, result: BatchResult) -> BatchResult:
        """`result` of linking these sections, with the rows admission refused or skipped:
        one outcome for every row of the batch."""
        result.rejections = self.rejections + result.rejections
        result.skips = self.skips + result.skips
        return result


class Timer:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - started


@dataclass(frozen=True)
class Embedded:
    queries: list[str]
    vectors: Vectors
    truncated: int
    cut: tuple[int, ...] = ()  # which queries (by position) were cut to fit the model


@dataclass(frozen=True)
class Retrieved:
    routing: list[RoutingDecision]
    hits: list[list[ScoredHub]]
    best: NDArray[np.float32] | None  # each hub's best linked-section cosine, per section


NOTHING = Embedded([], np.zeros((0, 1), dtype=np.float32), 0)  # no row to the models


@dataclass
class Prepared:
    """A batch after C.2-C.4: the cited CREs' envelopes (by position), and the rows that
    go on to the models, embedded and retrieved."""

    sections: list[Section]
    ctx: RunContext
    priors: Priors | None
    explicit: dict[int, Envelope] = field(default_factory=dict)
    to_model: list[tuple[int, Section]] = field(default_factory=list)  # (position, section)
    embedded: Embedded = NOTHING
    retrieved: Retrieved | None = None  # None: no row goes on to the models
    timer: Timer = field(default_factory=Timer)

    def rows(self, linked: Sequence[Linked]) -> list[tuple[Prepared, list[Linked]]]:
        """Each row as a batch of its own, with what C.5 made of it: a batch that fails
        to complete is completed row by row, each row with its source's outcome."""
        model_row = {pos: row for row, (pos, _) in enumerate(self.to_model)}
        out: list[tuple[Prepared, list[Linked]]] = []
        for pos, section in enumerate(self.sections):
            alone = Prepared([section], self.ctx, self.priors)
            if pos in self.explicit:
                alone.explicit = {0: self.explicit[pos]}
                out.append((alone, []))
                continue
            row = model_row[pos]
            assert self.retrieved is not None, "a model row was retrieved"
            alone.to_model = [(0, section)]
            cut = (0,) if row in self.embedded.cut else ()
            alone.embedded = Embedded(
                [self.embedded.queries[row]], self.embedded.vectors[row : row + 1], len(cut), cut
            )
            best = self.retrieved.best
            alone.retrieved = Retrieved(
                [self.retrieved.routing[row]],
                [self.retrieved.hits[row]],
                best[row : row + 1] if best is not None else None,
            )
            out.append((alone, [linked[row]]))
        return out


@dataclass
class ScoredRow:
    """One model row through C.6-C.10, each stage filling its part: C.6 the reranker's
    scores, C.7 the candidates, their order and confidences, C.8 the safety verdict, C.9
    the decision, C.10 the envelope and the facts the store keeps."""

    section: Section
    linked: Linked  # what C.5 made of it: its hits in C.5's order, its source's status
    vector: Vectors
    query: str
    rerank: list[float] | None = None
    candidates: list[Candidate] = field(default_factory=list)  # every hit, in C.5's order
    reranked: list[Candidate] = field(default_factory=list)
    ranked: list[Candidate] = field(default_factory=list)  # the suggestions, in shown order
    confidence: dict[str, float] = field(default_factory=dict)
    verdict: SafetyVerdict = field(default_factory=SafetyVerdict)
    decision: Decision | None = None
    envelope: Envelope | None = None
    facts: DecisionFacts | None = None

    @property
    def first(self) -> Candidate | None:
        """The suggestion shown first: the one linked."""
        return self.ranked[0] if self.ranked else None


@dataclass
class Completing:
    """A prepared batch's model rows as C.6-C.10 fold over them. `described`: the audit
    of a model-scored row (`Pipeline.description`)."""

    ctx: RunContext
    priors: Priors | None
    described: str
    rows: list[ScoredRow]


class PrepareStage(Protocol):
    """A stage of C.2-C.4: reads and fills a `Prepared` batch."""

    name: str  # its timer's name
    audited: bool  # listed in a model-scored row's audit (C.2 decides its rows alone)

    def components(self, priors_read: bool) -> list[Component]: ...

    def run(self, batch: Prepared) -> None: ...


class CompleteStage(Protocol):
    """A stage of C.6-C.10: fills its part of each row of a `Completing` batch."""

    name: str
    audited: bool  # listed in a model-scored row's audit (C.10 writes it)

    def components(self, priors_read: bool) -> list[Component]: ...

    def run(self, batch: Completing) -> None: ...
