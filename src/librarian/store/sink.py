"""The database as a sink (commit mode) and as the place prior decisions are read.

A batch's decisions, rejections and (from the queue table) consumed stamps are stored in
one transaction, or, when the database refuses the batch, one a row so only the
offending rows fail. Rows that errored while processed are, from a file, rejections;
from the queue, left for a later run (their attempts counted). Rows the database
refused become rejections in this run's files too.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from librarian.schemas.records import (
    BatchResult,
    Closable,
    Finished,
    Known,
    PriorDecision,
    RawBatch,
    RejectCode,
    Rejection,
    Section,
    Skip,
    rejected,
)
from librarian.store.decisions import StoredBatch, WriteResult, commit, priors, unchanged
from librarian.store.history import source_context
from librarian.store.policies import record_cuts


@dataclass(frozen=True)
class StoredPriors:
    """Prior decisions read from the store (commit mode, and a dry run given --db)."""

    session: Session
    models_digest: str | None = None  # an open item other models decided is not unchanged

    def unchanged(self, sections: Sequence[Section]) -> list[Skip]:
        return unchanged(self.session, sections, self.models_digest)

    def priors(self, sections: Sequence[Section]) -> dict[str, PriorDecision]:
        return priors(self.session, sections)


@dataclass(frozen=True)
class DatabaseStore:
    """The runner's `Store`: prior decisions (in a queue batch's own claim, else a session
    of their own) and each source's history."""

    engine: Engine
    models_digest: str | None = None
    # A document read whole: its chunks (`history.source_context`); None: a queue's rows.
    document: frozenset[str] | None = None

    @contextmanager
    def lookup(self, raw: RawBatch, claim: Closable | None) -> Iterator[StoredPriors]:
        if isinstance(claim, Session):
            yield StoredPriors(claim, self.models_digest)
            return
        with Session(self.engine) as session:
            yield StoredPriors(session, self.models_digest)

    def known(self, source: str, pending: Collection[str]) -> Known:
        with Session(self.engine) as session:
            return source_context(session, source, pending, self.document)


@dataclass
class DatabaseSink:
    """Commit mode's sink: a batch stored in its claim's transaction (the queue table), or
    in one of its own (a file)."""

    engine: Engine
    run_id: str
    source: str
    models_digest: str | None = None
    stored: WriteResult = field(default_factory=WriteResult)
    failed_ids: set[int] = field(default_factory=set)  # queue rows left for a later run
    stage: str = "store_write"
    relink_open: bool = False  # `relink`: every open item of a batch is decided again
    _cuts: dict[str, Any] = field(default_factory=dict)  # statuses and evidence recorded

    def counts(self) -> dict[str, int]:
        """What the run stored, for its summary."""
        stored = self.stored
        return {
            "decisions": stored.decisions,
            "rejections": stored.rejections,
            "already_stored": stored.already_there,
            "failed": len(stored.failed),
            "dead_lettered": stored.dead_lettered,
            "redecided": stored.redecided,
            "left_to_reviewers": stored.lost_to_review,
        }

    def write(self, batch: Finished) -> BatchResult:
        """Store the batch (and consume its queue rows); returns what was stored: rows that
        failed leave their envelopes and count as rejected."""
        raw, sections = batch.raw, batch.sections
        result = copy.copy(batch.result)
        from_queue = bool(raw.queue_ids)
        linked_lines = {s.line for s in sections}

        def left_in_queue(r: Rejection) -> bool:  # errored while processed, from the queue
            failed = r.reason == RejectCode.PROCESSING_ERROR and r.line in linked_lines
            return from_queue and failed

        failures = {r.line: r.message for r in result.rejections if left_in_queue(r)}
        rejections = [r for r in result.rejections if not left_in_queue(r)]
        stored = replace(
            StoredBatch.linked(self.run_id, result, sections, self.source),
            rejections=rejections, raw_lines=dict(raw.lines), claimed_ids=raw.queue_ids,
            failures=failures, models_digest=self.models_digest, relink_open=self.relink_open,
        )  # fmt: skip
        claim = batch.claim if isinstance(batch.claim, Session) else None
        with nullcontext(claim) if claim is not None else Session(self.engine) as session:
            written = commit(session, stored)
        # The cut each source has now, what readers without models show: written when a
        # source's status is new to this run (a file's batches share one window's).
        # What it was chosen from is made JSON here, once a source: only this sink stores it.
        cuts = {k: (v, result.cut_evidence.get(k)) for k, v in result.sources.items()}
        changed = {k: v for k, v in cuts.items() if self._cuts.get(k) != v}
        if changed:
            stored_as = {k: _with_evidence(*v) for k, v in changed.items()}
            with Session(self.engine) as session, session.begin():
                record_cuts(session, self.run_id, stored_as)
            self._cuts.update(changed)
        self.stored.add(written)
        result.rejections = rejections
        self._account_failures(sections, result, written, from_queue)
        return result

    def _account_failures(
        self,
        sections: Sequence[Section],
        result: BatchResult,
        written: WriteResult,
        from_queue: bool,
    ) -> None:
        if not written.failed:
            return
        line_of = {s.chunk_id: s.line for s in sections}
        result.envelopes = [
            e for e in result.envelopes if line_of[e.chunk_id] not in written.failed
        ]
        already = {r.line for r in result.rejections}
        for line, why in sorted(written.failed.items()):
            if from_queue:
                self.failed_ids.add(line)
                why = f"{why}; left in the queue for a later run (queue_attempts counts it)"
            if line not in already:
                chunk = next((c for c, n in line_of.items() if n == line), None)
                result.rejections.append(rejected(line, RejectCode.PROCESSING_ERROR, why, chunk))


def _with_evidence(status: dict[str, Any], evidence: Any) -> dict[str, Any]:
    """A source's status as stored: with what its cut was chosen from (`policy.CutEvidence`),
    where it was chosen (`SourceCut.evidence`)."""
    return status if evidence is None else {**status, "evidence": evidence.as_json()}
