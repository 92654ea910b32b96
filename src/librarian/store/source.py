"""The queue table as a source: each batch claimed in a transaction of its own, which the
database sink closes when it stores the batch (consumed_at stamped in that transaction)."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass

from sqlalchemy import Engine

from librarian.schemas.records import Claimed, RawBatch, RejectCode, rejected
from librarian.store.queue import QUEUE_SOURCE, claim


@dataclass(frozen=True)
class QueueTable:
    engine: Engine
    name: str = QUEUE_SOURCE

    def batches(self, size: int, skip: Collection[int] = ()) -> Iterator[Claimed]:
        """`skip` is read at each claim: rows that failed earlier in this run stay out."""
        while True:
            claimed = claim(self.engine, size, skip)
            eof = len(claimed.lines) < size
            raw = RawBatch(
                claimed.lines,
                0,
                0,
                0,
                eof=eof,
                queue_ids=claimed.ids,
                records={
                    n: rejected(n, RejectCode.MALFORMED_ROW, why)
                    for n, why in claimed.unreadable.items()
                },
            )
            yield Claimed(raw, claimed.session)
            if eof:
                return
