"""Re-deciding a source's open items with what its reviewers now certify.

A source's cut moves as its reviewers decide (`pipeline.policy`). `relink` takes the
source's items still open in the store, links them again as a whole with its history, and
(with `commit`) stores the new decisions. Every write is conditional on the item being
still open and unchanged (`store.decisions._replace`): an item a person decided is never
touched, even one decided while this runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from librarian.pipeline.accounting import close_out
from librarian.pipeline.batches import Admitted
from librarian.pipeline.emit import ScoreStage
from librarian.pipeline.pipeline import Pipeline
from librarian.pipeline.run import Collected, RunParts, Sink, run_source
from librarian.pipeline.summary import describe_pipeline, new_summary
from librarian.policy import DecisionPolicy
from librarian.schemas.envelopes import LinkProposal, ReviewItem
from librarian.schemas.records import RawBatch, RunSummary, Section, span_index_of
from librarian.settings import LinkerSettings
from librarian.store.decisions import (
    REVIEW_REQUIRED,
    WriteResult,
    section_of,
)
from librarian.store.policies import policy_of, record_policy, source_policy
from librarian.store.progress import OpenSource, open_by_source
from librarian.store.sink import DatabaseSink, DatabaseStore
from librarian.store.tables import DecisionRow


@dataclass
class Relinked:
    """What relinking one source did (or, without commit, would do)."""

    source: str
    open_items: int = 0
    linked: int = 0  # would now be (or were) linked automatically
    status: dict[str, Any] = field(default_factory=dict)  # the source's cut, as the run's
    stored: WriteResult | None = None
    mean_confidence: float = 0.0  # of each item's first suggestion, as decided now
    summary: RunSummary | None = None  # the run's own accounting (None: nothing open)
    policy: DecisionPolicy | None = None  # what it was decided under
    policy_changed: bool = False  # a policy given for it replaced the stored one


def open_sections(session: Session, source: str) -> list[Section]:
    """The source's open review items, as the sections they were decided from."""
    found = session.execute(
        select(DecisionRow.envelope, DecisionRow.span_key)
        .where(
            DecisionRow.source_key == source,
            DecisionRow.status == REVIEW_REQUIRED,
            DecisionRow.consumed_at.is_(None),
        )
        .order_by(DecisionRow.id)
    ).all()
    # Its span too: the section's key is the stored item's (a run's earlier items are
    # told from the window's rows by it).
    return [
        section_of(ReviewItem.model_validate(envelope)).model_copy(
            update={"line": n, "span_index": span_index_of(span_key)}
        )
        for n, (envelope, span_key) in enumerate(found, start=1)
    ]


def open_sources(session: Session) -> list[str]:
    """Every source with an item open, for an error that names them."""
    rows = session.execute(
        select(DecisionRow.source_key)
        .where(DecisionRow.status == REVIEW_REQUIRED, DecisionRow.consumed_at.is_(None))
        .distinct()
    ).scalars()
    return sorted(str(r) for r in rows if r)


def relink(
    engine: Engine,
    pipeline: Pipeline,
    source: str,
    run_id: str,
    commit: bool,
    given: Mapping[str, Any] | None = None,
) -> Relinked:
    """Link `source`'s open items again with its history, under the policy the store
    holds for it (the team's budget and guarantee, never a default), or with `given`
    (DecisionPolicy fields a person set for this relink) over it: a run like any other
    (`run_source`), counted in its own summary; with `commit`, stored through the
    database sink (each open item decided again), and that policy kept for `run_id`,
    the source's policy from then on."""
    with Session(engine) as session:
        sections = open_sections(session, source)
        stored = source_policy(session, source) is not None
        policy = before = policy_of(session, source, pipeline.policy)
    done = Relinked(source, open_items=len(sections))
    if not sections:
        return done
    if given:
        policy = replace(before, **given).checked()
        done.policy_changed = not stored or policy != before
    done.policy = policy
    linker = pipeline.with_policy(policy)
    collected = Collected()
    sink = DatabaseSink(engine, run_id, source, pipeline.models_digest, relink_open=True)
    sinks: list[Sink] = [sink, collected] if commit else [collected]
    mode = "commit" if commit else "dry-run"
    where = f"relink: the open items of {source}"
    shape = LinkerSettings(top_k=linker.retrieve.top_k, top_n=linker.stage(ScoreStage).top_n)
    done.summary = new_summary(where, "", shape, run_id, mode, None)
    describe_pipeline(done.summary, linker, priors_read=False)
    raw = RawBatch([(s.line, s.text.encode()) for s in sections], 0, 0, 0, eof=True)
    admitted = Admitted(raw, sections, [], [], None)
    # The store as a run reads it: the source's links and decisions, and its linked items
    # linked with the open ones, so that its cut is chosen from the same items a run's is.
    parts = RunParts(sinks=sinks, store=DatabaseStore(engine, pipeline.models_digest))
    run_source(linker, [admitted], linker.context(run_id), done.summary, parts)
    close_out(done.summary, sink.counts() if commit else None)
    result = collected.result
    done.linked = sum(isinstance(e, LinkProposal) for e in result.envelopes)
    firsts = [first_confidence(e) for e in result.envelopes]
    done.mean_confidence = sum(firsts) / len(firsts) if firsts else 0.0
    done.status = result.sources.get(source, {})
    if commit:
        done.stored = sink.stored
        with Session(engine) as session, session.begin():
            record_policy(session, run_id, policy)
    return done


def first_confidence(envelope: object) -> float:
    """The confidence of what the envelope would link first (0 without a suggestion)."""
    if isinstance(envelope, LinkProposal):
        return envelope.links[0].confidence
    if isinstance(envelope, ReviewItem) and envelope.suggested_links:
        return envelope.suggested_links[0].confidence
    return 0.0


@dataclass(frozen=True)
class SourceChange:
    """What new models change for one source's open items (nothing stored)."""

    before: OpenSource
    after: Relinked

    def says(self) -> str:
        cut_before = f"{self.before.cut:.3f}" if self.before.cut is not None else "?"
        cut_after = self.after.status.get("threshold")
        cut_now = f"{cut_after:.3f}" if isinstance(cut_after, float) else "?"
        return (
            f"{self.before.source}: {self.before.open_items} open items; cut {cut_before} -> "
            f"{cut_now}; mean confidence {self.before.mean_confidence:.3f} -> "
            f"{self.after.mean_confidence:.3f}; {self.after.linked} would now be linked "
            "automatically (the next run, or `librarian relink --source KEY --commit`)"
        )


def changes_for_open_items(
    engine: Engine, pipeline: Pipeline, limit: int = 20
) -> tuple[list[SourceChange], int]:
    """Per source with open items (the `limit` with the most), what `pipeline` would
    decide for them now, against what the store holds; and how many sources were left."""
    with Session(engine) as session:
        before = open_by_source(session)
    changes = [
        SourceChange(b, relink(engine, pipeline, b.source, "after-training", commit=False))
        for b in before[:limit]
    ]
    return changes, max(0, len(before) - limit)


class Rescorer:
    """The workbench's re-scoring at a source's calibration point: `relink` committed,
    with the pipeline built at its first use (loading the models takes seconds; the
    workbench starts without waiting)."""

    def __init__(self, engine: Engine, build: Callable[[], Pipeline]) -> None:
        self.engine, self.build = engine, build
        self._pipeline: Pipeline | None = None

    def __call__(self, source: str) -> str:
        if self._pipeline is None:
            self._pipeline = self.build()
        run_id = "rescore-" + datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        done = relink(self.engine, self._pipeline, source, run_id, commit=True)
        stored = done.stored or WriteResult()
        return (
            f"re-scored with its own calibration ({run_id}): {done.open_items} open items, "
            f"{done.linked} now linked automatically, {stored.lost_to_review} left to the "
            f"reviewers who decided them meanwhile; {done.status.get('says', '')}"
        )
