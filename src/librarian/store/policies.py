"""The decision policy each committed run decided under (`run_policies`, migration 0010), and
the one a source's items are decided again with: that of the run that last decided one
of them. Nothing that re-decides a source falls back to defaults while the store holds
its policy. And the cut each source has now (`source_cuts`, migration 0012): the one the
run or relink that last linked it chose, which every reader that runs no model shows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from librarian.policy import Certified, CutEvidence, DecisionPolicy
from librarian.sql import is_postgres
from librarian.store.tables import DecisionRow, RunPolicyRow, SourceCutRow


def record_policy(session: Session, run_id: str, policy: DecisionPolicy) -> None:
    """Store `run_id`'s policy (once: a run has one). The caller commits."""
    if session.get(RunPolicyRow, run_id) is None:
        session.add(RunPolicyRow(run_id=run_id, policy=policy.as_json(), created_at=now()))


def store_policy(engine: Engine, run_id: str, policy: DecisionPolicy) -> None:
    """`record_policy` in a transaction of its own (a run in commit mode, at its start)."""
    with Session(engine) as session:
        record_policy(session, run_id, policy)
        session.commit()


def _stored(session: Session, source: str) -> dict[str, Any] | None:
    """The policy, as stored, of the run that last decided one of `source`'s items (None:
    no item of it was decided by a run that stored one, as in a database from before 0010)."""
    found: dict[str, Any] | None = session.execute(
        select(RunPolicyRow.policy)
        .join(DecisionRow, DecisionRow.pipeline_run_id == RunPolicyRow.run_id)
        .where(DecisionRow.source_key == source)
        .order_by(DecisionRow.id.desc())
        .limit(1)
    ).scalar_one_or_none()
    return found


def source_policy(session: Session, source: str) -> DecisionPolicy | None:
    """The policy the run that last decided one of `source`'s items stored, read whole (its
    record: the trained cuts it decided with too); None: none stored."""
    found = _stored(session, source)
    return DecisionPolicy.from_json(found) if found is not None else None


def policy_of(
    session: Session, source: str, current: DecisionPolicy | None = None
) -> DecisionPolicy:
    """What `source` is decided and read under: the team's choices as stored (budget,
    confidence, guarantee, reviewed items a cut needs, a cut set by hand, the unmappable
    cut), over `current` (the models that decide now: their trained cuts; a reader that
    runs none: the defaults), which also stands for a source none was stored for. Every
    decider and reader asks this; nothing else falls back."""
    policy = current or DecisionPolicy()
    found = _stored(session, source)
    return policy.with_stored(found) if found is not None else policy


def now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class SourceCut:
    """A source's cut as the run `run_id` chose it, resting on `decisions` of its items."""

    source: str
    run_id: str
    threshold: float
    says: str
    decisions: int
    certified: Certified | None  # None: set by hand (`--threshold`)
    decided_at: datetime
    evidence: CutEvidence | None = None  # what it was chosen from (None: not chosen, or before)

    def now(self, decisions: int) -> str:
        """The cut in words for a reader that runs no model, with the decisions taken
        since it was chosen (`decisions`: the source's now)."""
        said = f"cut {self.threshold:.3f} (run {self.run_id}): {self.says}"
        since = decisions - self.decisions
        if since <= 0:
            return said
        return (
            f"{said}; {since} decided since, which the next run or `librarian relink "
            f"--source {self.source} --commit` decides its open items again with"
        )


def record_cuts(session: Session, run_id: str, sources: Mapping[str, Mapping[str, Any]]) -> None:
    """Each source's cut as `run_id` chose it (its `SourceStatus.as_json`), one upsert a
    batch: two writers at once (a relink beside the workbench's re-scoring) leave the later
    cut, never a duplicate key. The caller commits."""
    if not sources:
        return
    at = now()
    rows = [
        {"source_key": source, "run_id": run_id, "status": dict(status), "decided_at": at}
        for source, status in sources.items()
    ]
    dialect = postgresql if is_postgres(session.get_bind()) else sqlite
    insert = dialect.insert(SourceCutRow).values(rows)
    changed = {c: insert.excluded[c] for c in ("run_id", "status", "decided_at")}
    session.execute(insert.on_conflict_do_update(index_elements=["source_key"], set_=changed))


def certified_under(session: Session, source: str) -> str:
    """In words, what the source's auto-links were linked under: the guarantee its cut was
    certified by (`DecisionPolicy.guarantee`), the trained cut of a section linked alone,
    or a cut set by hand ("": no cut stored)."""
    cut = source_cut(session, source)
    if cut is None:
        return ""
    if cut.certified is None:
        return f"a cut set by hand ({cut.threshold:.3f})"
    if cut.certified.basis == "global":
        return "the trained models' cut for a section linked alone"
    return policy_of(session, source).guarantee()


def source_cut(session: Session, source: str) -> SourceCut | None:
    """The cut `source` has now (None: no run has linked it since 0012)."""
    row = session.get(SourceCutRow, source)
    if row is None:
        return None
    status = row.status
    cut, evidence = status.get("cut"), status.get("evidence")
    # The run's words end with its review plan as it was then; a reader of the cut says
    # the plan as it is now (`next_cut_says`), once.
    says = str(status.get("says", "")).removesuffix(f"; plan: {status.get('plan')}")
    return SourceCut(
        source=source,
        run_id=row.run_id,
        threshold=float(status["threshold"]),
        says=says,
        decisions=int(status.get("decisions", 0)),
        certified=Certified.from_json(cut) if isinstance(cut, dict) else None,
        decided_at=row.decided_at,
        evidence=CutEvidence.from_json(evidence) if isinstance(evidence, dict) else None,
    )
