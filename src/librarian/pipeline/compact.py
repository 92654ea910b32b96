"""What C.5 needs of every row of a window, kept in arrays while the rest of each prepared
batch waits on disk: a row's source, two digests (its item key and its normalised text:
rows of one span or one text are one item), its candidates' hub columns and scores, and
their linked-section evidence. About 250 bytes a row at top 20, against some 50 KB for a
prepared row; `rows_of` gives one source's rows back as `SlotRow`s, one source at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from librarian.pipeline.source_level import SlotRow, normalised
from librarian.retrieval.flat import ScoredHub
from librarian.text import key_digest

Place = tuple[int, int, int]  # (batch, part, row): where a row's outcome goes back
DIGEST_BYTES = 16  # `key_digest`'s


def compared(
    source: str,
    key: str,
    text: str,
    hits: list[ScoredHub],
    evidence: list[float] | None,
    overlaps: list[float] | None = None,
) -> SlotRow:
    """A row as C.5 compares it: its key and normalised text as digests (`CompactRows`
    keeps no more of the pending rows; reviewed and earlier items are given the same way,
    and the normalised form of a hex digest is itself), and what the verifier reads of
    its text (`overlaps`, read from the text before it is a digest)."""
    digest = key_digest(normalised(text))
    return SlotRow(source, key_digest(key), digest, hits, evidence, overlaps)


def _narrow(values: NDArray[np.float64]) -> NDArray[np.floating]:
    """float32 when that loses nothing (the flat retriever scores in float32), else as is:
    a decision must not change because its scores waited in an array."""
    narrow = values.astype(np.float32)
    same = np.array_equal(narrow.astype(np.float64), values, equal_nan=True)
    return narrow if same else values


@dataclass
class _Part:
    place: tuple[int, int]
    sources: NDArray[np.int32]
    keys: NDArray[np.bytes_]
    texts: NDArray[np.bytes_]
    columns: NDArray[np.int16]  # -1: no candidate there
    scores: NDArray[np.floating]
    evidence: NDArray[np.floating] | None
    overlaps: NDArray[np.floating] | None = None


@dataclass
class CompactRows:
    """A window's rows for C.5, in input order; `hub_ids`: the index's columns."""

    hub_ids: Sequence[str]
    _parts: list[_Part] = field(default_factory=list)
    _source_ids: dict[str, int] = field(default_factory=dict)
    _index: _BySource | None = None  # built by the first `rows_of` after an `add`

    def __post_init__(self) -> None:
        self._column = {c: i for i, c in enumerate(self.hub_ids)}

    def __len__(self) -> int:
        return sum(len(p.sources) for p in self._parts)

    def add(self, batch: int, part: int, rows: Sequence[SlotRow]) -> None:
        if not rows:
            return
        self._index = None
        width = max(1, max(len(r.hits) for r in rows))
        columns = np.full((len(rows), width), -1, dtype=np.int16)
        scores = np.zeros((len(rows), width))
        with_evidence = rows[0].evidence is not None
        evidence = np.zeros((len(rows), width)) if with_evidence else None
        read = np.zeros((len(rows), width)) if rows[0].overlaps is not None else None
        for i, row in enumerate(rows):
            columns[i, : len(row.hits)] = [self._column[h.cre_id] for h in row.hits]
            scores[i, : len(row.hits)] = [h.score for h in row.hits]
            if evidence is not None:
                assert row.evidence is not None, "evidence is retrieved for a whole batch"
                evidence[i, : len(row.hits)] = row.evidence
            if read is not None:
                assert row.overlaps is not None, "a batch is read by one verifier"
                read[i, : len(row.hits)] = row.overlaps
        self._parts.append(
            _Part(
                (batch, part),
                np.asarray([self._source_id(r.source) for r in rows], dtype=np.int32),
                np.asarray(
                    [bytes.fromhex(key_digest(r.key)) for r in rows], dtype=f"S{DIGEST_BYTES}"
                ),
                np.asarray(
                    [bytes.fromhex(key_digest(normalised(r.text))) for r in rows],
                    f"S{DIGEST_BYTES}",
                ),
                columns,
                _narrow(scores),
                _narrow(evidence) if evidence is not None else None,
                _narrow(read) if read is not None else None,
            )
        )

    def _source_id(self, source: str) -> int:
        return self._source_ids.setdefault(source, len(self._source_ids))

    @property
    def sources(self) -> list[str]:
        """Each source once, in the order its first row came."""
        return list(self._source_ids)

    def rows_of(self, source: str) -> tuple[list[Place], list[SlotRow]]:
        """One source's rows, in input order, and where each came from."""
        if self._index is None:
            self._index = _BySource.of(self._parts)
        places: list[Place] = []
        rows: list[SlotRow] = []
        for at, i in self._index.rows(self._source_ids[source]):
            part = self._parts[at]
            places.append((*part.place, i))
            rows.append(self._row(source, part, i))
        return places, rows

    def _row(self, source: str, part: _Part, i: int) -> SlotRow:
        width = int(np.count_nonzero(part.columns[i] >= 0))
        hits = [
            ScoredHub(self.hub_ids[int(c)], float(s))
            for c, s in zip(part.columns[i, :width], part.scores[i, :width], strict=True)
        ]
        evidence = None
        if part.evidence is not None:
            evidence = [float(v) for v in part.evidence[i, :width]]
        overlaps = None
        if part.overlaps is not None:
            overlaps = [float(v) for v in part.overlaps[i, :width]]
        key, text = _hex(part.keys[i]), _hex(part.texts[i])
        return SlotRow(source, key, text, hits, evidence, overlaps)


def _hex(digest: np.bytes_) -> str:
    """A digest back from its S16 cell. NumPy drops a fixed-width bytes value's trailing
    zero bytes when it reads it; a digest that ends in one (1 in 256) must keep it, or its
    item is unknown to the store (its cut's evidence and the store's own digest differ)."""
    return bytes(digest).ljust(DIGEST_BYTES, b"\0").hex()


@dataclass(frozen=True)
class _BySource:
    """The window's rows in source order (stable: input order within a source), each
    source's run found by one lookup, not by a pass over every part for each source (a
    window of 4,800 one-row sources made that 91,000 passes)."""

    order: NDArray[np.intp]  # window-wide row numbers, sorted by source
    starts: NDArray[np.intp]  # where each source id's run begins in `order`, and the end
    first: NDArray[np.intp]  # each part's first window-wide row number

    @classmethod
    def of(cls, parts: Sequence[_Part]) -> _BySource:
        sources = np.concatenate([p.sources for p in parts])
        order = np.argsort(sources, kind="stable")
        starts = np.searchsorted(sources[order], np.arange(int(sources.max()) + 2))
        first = np.cumsum([0, *(len(p.sources) for p in parts)])[:-1]
        return cls(order, starts, first)

    def rows(self, source: int) -> list[tuple[int, int]]:
        """(part, row in its part) of each of `source`'s rows, in input order."""
        numbers = self.order[self.starts[source] : self.starts[source + 1]]
        at = np.searchsorted(self.first, numbers, side="right") - 1
        return list(zip(at.tolist(), (numbers - self.first[at]).tolist(), strict=True))
