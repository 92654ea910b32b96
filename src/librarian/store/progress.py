"""Where each source stands with its reviewers, for the people reading it (`queue
status`, the workbench, `train`'s preview): its decisions, its calibration sample, the cut
it has now and what its reviewed items would certify. What a run reads of a source is
`store/history.py`; nothing here is read by a run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from librarian.policy import (
    CALIBRATION_SAMPLE,
    CutEvidence,
    DecisionPolicy,
    Evidence,
    ReviewPlan,
    outlook,
    review_next,
    text_digest,
)
from librarian.settings import MIN_SOURCE_DECISIONS
from librarian.store.decisions import REVIEW_REQUIRED
from librarian.store.history import counted_once, source_history, undecided
from librarian.store.policies import SourceCut, policy_of, source_cut
from librarian.store.tables import DecisionRow, HumanDecisionRow
from librarian.text import key_digest


def decisions_seen(session: Session, source: str) -> int:
    """How many of the source's requirements people have decided one by one: the
    decisions its calibration reads (`history.counted_once`: each requirement once, by its
    latest standing decision), so every "N decided, M more" says what calibrates. Undone
    and superseded decisions are left out, another version's or a duplicate's, and bulk
    approvals (nobody weighed those items)."""
    rows = session.execute(
        select(DecisionRow.span_key, DecisionRow.text, HumanDecisionRow.record)
        .join(DecisionRow, DecisionRow.id == HumanDecisionRow.decision_row_id)
        .where(DecisionRow.source_key == source, HumanDecisionRow.standing())
        .order_by(HumanDecisionRow.decided_at.desc(), HumanDecisionRow.id.desc())
    ).all()
    return len(counted_once((key, text, record, None) for key, text, record in rows))


@dataclass(frozen=True)
class Standing:
    """Where one source stands, as every reader that runs no model reads it (`queue
    status`, the workbench's item page): its decisions one by one, the cut its last run
    or relink chose, its policy, that cut's evidence with the decisions since, and the
    review plan on it. One assembly, so that they say the same numbers."""

    key: str
    decisions: int
    stored: SourceCut | None
    policy: DecisionPolicy
    evidence: Evidence | None
    plan: ReviewPlan | None

    @property
    def cut(self) -> str:
        """The cut it has now, in words ("": no run or relink chose one)."""
        return self.stored.now(self.decisions) if self.stored is not None else ""


def standing(session: Session, key: str) -> Standing:
    """Where the source `key` stands now (`Standing`)."""
    stored = source_cut(session, key)
    policy = policy_of(session, key)
    evidence = evidence_after(session, key, stored)
    plan = evidence.plan(policy) if evidence is not None else None
    return Standing(key, decisions_seen(session, key), stored, policy, evidence, plan)


@dataclass(frozen=True)
class SourceProgress:
    """Where one source stands with its reviewers: its open items, its decisions, how many
    more before its own calibration and threshold apply (`needed`), how it was linked
    last (its latest item's `source_linked`), and the open items to review first."""

    key: str
    open_items: int
    decisions: int
    needed: int
    linked: str | None
    # Its calibration sample still to decide (review ids): the items whose decisions
    # certify the most auto-links (`policy.calibration_sample`).
    review_first: tuple[str, ...]
    certified: str = ""  # what its decisions certify now (`next_cut_says`)
    items: int = 0  # all its sections in the store: open, decided, linked
    cut: str = ""  # the cut it has now, in words (`SourceCut.now`: the last run's or relink's)
    outlook: str = ""  # what a source of its size can expect (`policy.plan.outlook`)

    @property
    def small(self) -> bool:
        """Its calibration sample is the whole of it: no triage to offer."""
        return self.size <= CALIBRATION_SAMPLE

    @property
    def size(self) -> int:
        """Its requirements, each once (`items`; its open and decided items where the
        store has no count of it)."""
        return self.items or self.open_items + self.decisions

    def expect(self) -> str:
        """What a source of this size can expect, in plain words."""
        items = self.size
        if self.small:
            return (
                f"a {items}-item source: review all of it; what you decide certifies its next "
                "versions (their new and changed rules are linked under the cut these "
                "decisions earn, a changed rule decided again)"
            )
        return (
            f"a {items}-item source: the {CALIBRATION_SAMPLE} items of its calibration "
            "sample decide how much of the rest can be linked automatically"
            + (f"; {self.outlook}" if self.outlook else "")
        )


def source_progress(session: Session) -> list[SourceProgress]:
    """Every source in the store, most open items first, with the open items its
    reviewers should decide first: its review plan's next decisions, or its calibration
    sample (`policy.calibration_sample`), CALIBRATION_SAMPLE in all with the decisions it
    has, over the confidences its cut reads (`evidence_now`: no model is run)."""
    # Small columns only: the queue page shows this on every load, and envelopes are big.
    rows = session.execute(
        select(
            DecisionRow.id,
            DecisionRow.source_key,
            DecisionRow.review_id,
            DecisionRow.span_key,
            DecisionRow.text,
            DecisionRow.confidence,
        ).where(
            DecisionRow.source_key.is_not(None),
            DecisionRow.status == REVIEW_REQUIRED,
            DecisionRow.consumed_at.is_(None),
        )
    ).all()
    latest_ids = session.execute(
        select(func.max(DecisionRow.id))
        .where(DecisionRow.source_key.is_not(None))
        .group_by(DecisionRow.source_key)
    ).scalars()
    latest_of = {
        str(key): linked
        for key, linked in session.execute(
            select(DecisionRow.source_key, DecisionRow.source_linked).where(
                DecisionRow.id.in_(list(latest_ids))
            )
        ).tuples()
    }
    open_by: dict[str, list[Any]] = {key: [] for key in latest_of}
    for row in rows:
        open_by[str(row.source_key)].append(row)
    sizes = source_sizes(session)
    return sorted(
        (
            _progress(session, key, open_items, latest_of[key], int(sizes.get(key, 0)))
            for key, open_items in open_by.items()
        ),
        key=lambda p: (-p.open_items, p.key),
    )


def _progress(
    session: Session, key: str, open_items: list[Any], linked: str | None, items: int
) -> SourceProgress:
    now = standing(session, key)
    seen, stored = now.decisions, now.stored
    drawn = sample_frame(open_items, stored.evidence if stored is not None else None)
    picks = review_next([c for _, c in drawn], now.plan, seen, key)
    return SourceProgress(
        key=key,
        open_items=len(open_items),
        decisions=seen,
        needed=max(0, MIN_SOURCE_DECISIONS - seen),
        linked=linked,
        review_first=tuple(str(open_items[drawn[i][0]].review_id) for i in picks),
        certified=next_cut_says(now.evidence, now.policy),
        items=items,
        cut=now.cut,
        outlook=outlook(items or len(open_items) + seen, now.policy),
    )


def sample_frame(open_items: list[Any], evidence: CutEvidence | None) -> list[tuple[int, float]]:
    """The open items the calibration sample is drawn from (their indices), each at the
    confidence the plan reads: its version's cold confidence in the stored evidence, so
    that the items asked for are a probability sample of the band the plan certifies. An
    open item that evidence never saw is no part of it (the next run or relink places
    it); with no stored evidence at all (no plan), every open item at the confidence it
    was shown with."""
    if evidence is None:
        return [(i, r.confidence or 0.0) for i, r in enumerate(open_items)]
    cold = evidence.confidences()
    out = []
    for i, row in enumerate(open_items):
        digest = key_digest(row.span_key)
        confidence = cold.get((digest, text_digest(row.text)), cold.get((digest, "")))
        if confidence is not None:
            out.append((i, confidence))
    return out


def source_sizes(session: Session) -> dict[str, int]:
    """How many sections each source has in the store: open, decided or linked (none
    that left its document), each once: a section whose text a later version changed has
    a row for each text, one place in its document (its `span_key`)."""
    counted = session.execute(
        select(DecisionRow.source_key, func.count(DecisionRow.span_key.distinct()))
        .where(DecisionRow.source_key.is_not(None), DecisionRow.withdrawn_at.is_(None))
        .group_by(DecisionRow.source_key)
    ).all()
    return {str(key): int(n) for key, n in counted}


def evidence_now(session: Session, source: str) -> Evidence | None:
    """The confidences `source`'s cut reads now: those its last run or relink chose it
    from (each item's cold confidence, `SourceCut.evidence`), with the decisions taken
    since, the ones a run reads (`store.history`). The next relink of the same items
    chooses its cut from the same numbers with the same function. None: no stored
    evidence (a cut set by hand, a section linked alone, a store from before), or an item
    decided that it never saw."""
    return evidence_after(session, source, source_cut(session, source))


def evidence_after(session: Session, source: str, stored: SourceCut | None) -> Evidence | None:
    """`evidence_now` from the source's cut as the caller read it (its evidence can be
    large: read once)."""
    if stored is None or stored.evidence is None:
        return None
    history = source_history(session, [source]).get(source)
    # Versions as C.5 compares them (`pipeline.compact.compared`): digests.
    reviewed = history.reviewed if history is not None else ()
    decided = [(key_digest(r.key), text_digest(r.text), r.cre_ids) for r in reviewed]
    rows = session.execute(
        select(DecisionRow.span_key, DecisionRow.text, DecisionRow.status).where(
            DecisionRow.source_key == source, undecided()
        )
    ).all()
    present = {(key_digest(k), text_digest(t)): status for k, t, status in rows}
    opened = {version for version, status in present.items() if status == REVIEW_REQUIRED}
    return stored.evidence.now(decided, set(present), opened)


def next_cut_says(evidence: Evidence | None, policy: DecisionPolicy) -> str:
    """What the source's decisions certify now, in words (`evidence_now`): the cut the
    next run or `relink` chooses, with the open items it links there (the undecided
    items it certifies that are not linked already), or its review plan ("": no evidence
    to read)."""
    if evidence is None:
        return ""
    band = evidence.cut(policy)
    if band.basis != "reviewed" or not band.auto_links:
        return "review plan: " + evidence.plan(policy).says(policy)
    links = evidence.to_link(band)
    already = band.auto_links - links
    then = (
        f"the next run or `librarian relink` links them ({links} open items)"
        if not already
        else f"the next run or `librarian relink` links the {links} still open ({already} "
        "linked already)"
    )
    return (
        f"its {band.reviewed} reviewed items above {band.cut:.3f} ({band.reviewed_wrong} wrong) "
        f"now certify {band.auto_links} undecided items at >= {band.cut:.3f} under "
        f"'{policy.guarantee()}': {then}"
    )


def source_of_row(session: Session, row_id: int) -> str | None:
    """The source key of decision row `row_id`."""
    return session.execute(
        select(DecisionRow.source_key).where(DecisionRow.id == row_id)
    ).scalar_one_or_none()


def band_after(session: Session, row_id: int) -> str:
    """`next_cut_says` for the source of decision row `row_id`: what the workbench says
    after each decision."""
    source = source_of_row(session, row_id)
    if source is None:
        return ""
    return next_cut_says(evidence_now(session, source), policy_of(session, source))


def latest_cut(session: Session, source: str) -> float | None:
    """The cut the source has now: the last run's or relink's (`source_cuts`), else (a
    store from before 0012) the one its latest stored item was decided with."""
    stored = source_cut(session, source)
    if stored is not None:
        return stored.threshold
    latest = session.execute(
        select(DecisionRow.envelope)
        .where(DecisionRow.source_key == source)
        .order_by(DecisionRow.id.desc())
        .limit(1)
    ).scalar_one_or_none()
    cut = ((latest or {}).get("retrieval") or {}).get("threshold")
    return float(cut) if cut is not None else None


@dataclass(frozen=True)
class OpenSource:
    """A source's items open for review, as the store holds them."""

    source: str
    open_items: int
    mean_confidence: float  # of each open item's first suggestion
    cut: float | None  # the cut its latest item was decided with


def open_by_source(session: Session) -> list[OpenSource]:
    """Every source with items open for review, most open items first."""
    rows = session.execute(
        select(DecisionRow.source_key, DecisionRow.confidence).where(
            DecisionRow.status == REVIEW_REQUIRED,
            DecisionRow.consumed_at.is_(None),
            DecisionRow.source_key.is_not(None),
        )
    ).all()
    confidences: dict[str, list[float]] = {}
    for source, confidence in rows:
        confidences.setdefault(str(source), []).append(float(confidence or 0.0))
    out = []
    for source, values in sorted(confidences.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        mean = sum(values) / len(values)
        out.append(OpenSource(source, len(values), mean, latest_cut(session, source)))
    return out
