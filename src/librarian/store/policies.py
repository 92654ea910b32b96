"""The risk policy each committed run decided under (`run_policies`, migration 0010), and
the one a source's items are decided again with: that of the run that last decided one
of them. Nothing that re-decides a source falls back to defaults while the store holds
its policy."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from librarian.policy import RiskPolicy
from librarian.store.tables import DecisionRow, RunPolicyRow


def record_policy(session: Session, run_id: str, policy: RiskPolicy) -> None:
    """Store `run_id`'s policy (once: a run has one). The caller commits."""
    if session.get(RunPolicyRow, run_id) is None:
        session.add(RunPolicyRow(run_id=run_id, policy=policy.as_json(), created_at=now()))


def store_policy(engine: Engine, run_id: str, policy: RiskPolicy) -> None:
    """`record_policy` in a transaction of its own (a run in commit mode, at its start)."""
    with Session(engine) as session:
        record_policy(session, run_id, policy)
        session.commit()


def source_policy(session: Session, source: str) -> RiskPolicy | None:
    """The policy of the run that last decided one of `source`'s items (None: no item of
    it was decided by a run that stored one, as in a database from before 0010)."""
    found = session.execute(
        select(RunPolicyRow.policy)
        .join(DecisionRow, DecisionRow.pipeline_run_id == RunPolicyRow.run_id)
        .where(DecisionRow.source_key == source)
        .order_by(DecisionRow.id.desc())
        .limit(1)
    ).scalar_one_or_none()
    return RiskPolicy.from_json(found) if found is not None else None


def applied(stored: RiskPolicy | None, current: RiskPolicy) -> RiskPolicy:
    """What a source is decided again under: the team's choices as stored (budget,
    confidence, guarantee, reviewed items a cut needs), with the prior of the models
    deciding now (the prior belongs to the models)."""
    if stored is None:
        return current
    return replace(stored, prior_weight=current.prior_weight, prior_scale=current.prior_scale)


def now() -> datetime:
    return datetime.now(UTC)
