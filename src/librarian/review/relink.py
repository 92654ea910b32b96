"""Re-deciding a source's open items with what its reviewers now certify, in words.

A source's cut moves as its reviewers decide. `relink` runs the link job on the source's
items still open in the store (`job.LinkJob.relink`: linked again as a whole with its
history, under the policy its runs keep) and says what it did; with `commit` the job
stores the new decisions. Every write is conditional on the item being still open and
unchanged (`store.decisions._replace`): an item a person decided is never touched, even
one decided while this runs.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from librarian.job import HandOff, LinkJob, here, run_job
from librarian.pipeline.pipeline import Pipeline
from librarian.pipeline.run import Collected
from librarian.policy import DecisionPolicy
from librarian.schemas.envelopes import LinkProposal, ReviewItem
from librarian.schemas.records import RunSummary
from librarian.settings import LinkerSettings
from librarian.store.decisions import REVIEW_REQUIRED
from librarian.store.policies import policy_of, source_policy
from librarian.store.progress import OpenSource, open_by_source
from librarian.store.tables import DecisionRow

# How a relink's job is started: the job and what travels beside it in, its summary out.
# In this process by default (`in_process`); `librarian relink` launches the linking flow
# (`flows.launch`), as `librarian run` does.
Start = Callable[[LinkJob, HandOff], RunSummary]


def in_process(engine: Engine, pipeline: Pipeline) -> Start:
    """A relink's job run here, each step in this process, on `engine` (the workbench's
    re-scorer and `train`'s preview: no flow server to wait for)."""
    return lambda job, hand_off: run_job(job, here(pipeline), hand_off, engine)


@dataclass
class Relinked:
    """What relinking one source did (or, without commit, would do)."""

    source: str
    open_items: int = 0
    linked: int = 0  # would now be (or were) linked automatically
    status: dict[str, Any] = field(default_factory=dict)  # the source's cut, as the run's
    mean_confidence: float = 0.0  # of each item's first suggestion, as decided now
    summary: RunSummary | None = None  # the run's own accounting (None: nothing open)
    policy: DecisionPolicy | None = None  # what it was decided under
    policy_changed: bool = False  # a policy given for it replaced the stored one

    @property
    def redecided(self) -> int:
        return self.summary.stored.get("redecided", 0) if self.summary else 0

    @property
    def left_to_reviewers(self) -> int:
        """Open items a person decided while this ran: theirs, untouched."""
        return self.summary.stored.get("left_to_reviewers", 0) if self.summary else 0


def open_count(session: Session, source: str) -> int:
    found = session.execute(
        select(func.count(DecisionRow.id)).where(
            DecisionRow.source_key == source,
            DecisionRow.status == REVIEW_REQUIRED,
            DecisionRow.consumed_at.is_(None),
        )
    ).scalar_one()
    return int(found)


def relink(
    engine: Engine,
    pipeline: Pipeline,
    source: str,
    run_id: str,
    commit: bool,
    given: Mapping[str, Any] | None = None,
    out_dir: Path | None = None,
    start: Start | None = None,
) -> Relinked:
    """Link `source`'s open items again with its history, under the policy the store
    holds for it (the team's budget and guarantee, never a default), or with `given`
    (DecisionPolicy fields a person set for this relink) over it: a link job like any
    other (`job.LinkJob.relink`), started by `start` (default: `in_process`), its files
    written to `out_dir` (None: nowhere kept); with `commit`, each open item decided again
    in the store, and that policy kept for `run_id`, the source's policy from then on."""
    with Session(engine) as session:
        open_items = open_count(session, source)
        stored = source_policy(session, source) is not None
        before = policy_of(session, source, pipeline.policy)
    done = Relinked(source, open_items=open_items)
    if not open_items:
        return done
    collected = Collected()
    # The summary's shape: the suggestions the pipeline it was handed keeps.
    shape = LinkerSettings(top_k=pipeline.retrieve.top_k, top_n=pipeline.top_n)
    with tempfile.TemporaryDirectory(prefix="librarian-relink-") as scratch:
        job = LinkJob(
            None, out_dir or Path(scratch), shape, run_id, str(engine.url), commit=commit,
            relink=source, policy_given=dict(given or {}),
        )  # fmt: skip
        hand_off = HandOff(pipeline=pipeline, watching=(collected,))
        done.summary = (start or in_process(engine, pipeline))(job, hand_off)
    done.policy = DecisionPolicy.from_json(done.summary.policy)
    done.policy_changed = bool(given) and (not stored or done.policy != before)
    envelopes = collected.result.envelopes
    done.linked = sum(isinstance(e, LinkProposal) for e in envelopes)
    firsts = [first_confidence(e) for e in envelopes]
    done.mean_confidence = sum(firsts) / len(firsts) if firsts else 0.0
    done.status = collected.result.sources.get(source, {})
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
        return (
            f"re-scored with its own calibration ({run_id}): {done.open_items} open items, "
            f"{done.linked} now linked automatically, {done.left_to_reviewers} left to the "
            f"reviewers who decided them meanwhile; {done.status.get('says', '')}"
        )
