"""The records a batch is carried in between the stages, and what the runner needs of
a store's prior decisions: an admitted batch (after C.0-C.1), a prepared one (after
C.2-C.4). The stages (`pipeline.py`) make them; the runner (`run.py`) carries them."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from librarian.pipeline.envelopes import RunContext
from librarian.pipeline.source_level import Linked, SlotRow
from librarian.pipeline.stages import Embedded, Retrieved
from librarian.schemas.envelopes import Envelope
from librarian.schemas.records import (
    BatchResult,
    PriorDecision,
    RawBatch,
    Rejection,
    Section,
    Skip,
)

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


NOTHING = Embedded([], np.zeros((0, 1), dtype=np.float32), 0)  # no row to the models


@dataclass
class Prepared:
    """A batch after C.2-C.4: the cited CREs' envelopes (by position), and the rows that
    go on to the models, embedded and retrieved."""

    sections: list[Section]
    ctx: RunContext
    priors: Priors | None
    explicit: dict[int, Envelope]
    to_model: list[tuple[int, Section]]  # (position, section)
    embedded: Embedded
    retrieved: Retrieved | None  # None: no row goes on to the models
    timer: Timer

    def rows(self, linked: Sequence[Linked]) -> list[tuple[Prepared, list[Linked]]]:
        """Each row as a batch of its own, with what C.5 made of it: a batch that fails
        to complete is completed row by row, each row with its source's outcome."""
        model_row = {pos: row for row, (pos, _) in enumerate(self.to_model)}
        out: list[tuple[Prepared, list[Linked]]] = []
        for pos, section in enumerate(self.sections):
            alone = Prepared([section], self.ctx, self.priors, {}, [], NOTHING, None, Timer())
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
