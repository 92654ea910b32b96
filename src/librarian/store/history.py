"""What a source already has in the store, for linking it as a whole: the CREs it links
(auto-links and people's approvals and corrections), and its reviewers' decisions with
the text they were made on (the latest MAX_REVIEWED per source)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import Session

from librarian.policy import CALIBRATION_SAMPLE, RiskPolicy, calibration_sample, choose_cut
from librarian.schemas.records import EarlierItem, Known, Reviewed, SourceHistory
from librarian.settings import MIN_SOURCE_DECISIONS
from librarian.store.decisions import LINKED, REVIEW_REQUIRED
from librarian.store.human import by_bulk
from librarian.store.policies import source_cut, source_policy
from librarian.store.tables import DecisionRow, HumanDecisionRow
from librarian.text import key_digest

# A source's decisions read per run: enough to calibrate it, bounded in embedding work.
MAX_REVIEWED = 500


# A source's earlier items linked with a window's rows: a standard's worth and more,
# bounded so that a source's C.5 working set is too.
MAX_EARLIER = 20_000


def source_history(
    session: Session, sources: Collection[str], leave_out: Collection[int] = ()
) -> dict[str, SourceHistory]:
    """By source key: what each of `sources` links (not counting the rows `leave_out`:
    they are linked again with the window), and its decided items."""
    out: dict[str, SourceHistory] = {}
    for source in sorted(set(sources)):
        rows = session.execute(
            select(DecisionRow.id, DecisionRow.top_cre_id).where(
                DecisionRow.source_key == source,
                DecisionRow.status == LINKED,
                DecisionRow.top_cre_id.is_not(None),
            )
        ).all()
        linked = {cre for row_id, cre in rows if row_id not in leave_out}
        reviewed = _reviewed(session, source)
        for item in reviewed:
            linked.update(item.cre_ids)
        if linked or reviewed:
            out[source] = SourceHistory(frozenset(c for c in linked if c), tuple(reviewed))
    return out


def source_context(session: Session, source: str, pending: Collection[str]) -> Known:
    """What a window linking `source` needs of the store: the source's items earlier
    windows stored and nobody has decided yet (the latest MAX_EARLIER, in the order they
    were stored; none that is a `pending` row: a span read again is the window's), and its
    history, in which those items' own links do not count as taken (in a file they would
    be rows of the window, not links it already has)."""
    open_or_linked = or_(
        DecisionRow.status == LINKED,
        and_(DecisionRow.status == REVIEW_REQUIRED, DecisionRow.consumed_at.is_(None)),
    )
    rows = session.execute(
        select(DecisionRow.id, DecisionRow.span_key, DecisionRow.text, DecisionRow.candidates)
        .where(
            DecisionRow.source_key == source,
            DecisionRow.candidates.is_not(None),
            open_or_linked,
        )
        .order_by(DecisionRow.id.desc())
        .limit(MAX_EARLIER)
    ).all()
    earlier = [
        (row_id, _earlier(span, text, candidates))
        for row_id, span, text, candidates in reversed(rows)
        if key_digest(span) not in pending
    ]
    items = tuple(item for _, item in earlier if item is not None)
    leave_out = {row_id for row_id, item in earlier if item is not None}
    history = source_history(session, [source], leave_out).get(source)
    return Known(history, items)


def _earlier(span: str, text: str, candidates: Any) -> EarlierItem | None:
    """A stored item's candidates as C.5 reads them (None: not in the shape we write)."""
    try:
        evidence = candidates.get("evidence")
        return EarlierItem(
            span,
            text,
            tuple(str(c) for c in candidates["ids"]),
            tuple(float(s) for s in candidates["scores"]),
            tuple(float(e) for e in evidence) if evidence is not None else None,
        )
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def _reviewed(session: Session, source: str) -> list[Reviewed]:
    """The latest standing decision of each decided item (undone ones left out): approved
    and corrected items with their CREs, rejected ones with none (the first suggestion
    was wrong, and no CRE fits)."""
    rows = session.execute(
        select(HumanDecisionRow, DecisionRow)
        .join(DecisionRow, DecisionRow.id == HumanDecisionRow.decision_row_id)
        .where(DecisionRow.source_key == source, HumanDecisionRow.standing())
        .order_by(HumanDecisionRow.decided_at.desc(), HumanDecisionRow.id.desc())
    ).all()
    seen: set[int] = set()
    out: list[Reviewed] = []
    for human, item in rows:
        if item.id in seen or by_bulk(human.record):
            continue  # a bulk approval certifies no cut: nobody looked at the item
        seen.add(item.id)
        cres = tuple((human.final_cre_ids or "").split()) if human.action != "reject" else ()
        locator = (item.envelope or {}).get("knowledge", {}).get("locator", {})
        out.append(Reviewed(item.span_key, item.text, locator.get("title"), cres))
        if len(out) >= MAX_REVIEWED:
            break
    return out


def decisions_seen(session: Session, source: str) -> int:
    """How many of the source's items people have decided one by one: the decisions its
    calibration reads (`_reviewed`), so every "N decided, M more" says what calibrates.
    Undone and superseded decisions are left out, and bulk approvals (nobody weighed
    those items)."""
    rows = session.execute(
        select(HumanDecisionRow.decision_row_id, HumanDecisionRow.record)
        .join(DecisionRow, DecisionRow.id == HumanDecisionRow.decision_row_id)
        .where(DecisionRow.source_key == source, HumanDecisionRow.standing())
    ).all()
    return len({row_id for row_id, record in rows if not by_bulk(record)})


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
    certified: str = ""  # the band its reviewed items certify now (`certified_now`)
    items: int = 0  # all its sections in the store: open, decided, linked
    cut: str = ""  # the cut it has now, in words (`SourceCut.now`: the last run's or relink's)

    @property
    def small(self) -> bool:
        """Its calibration sample is the whole of it: no triage to offer."""
        return max(self.items, self.open_items + self.decisions) <= CALIBRATION_SAMPLE

    def expect(self) -> str:
        """What a source of this size can expect, in plain words."""
        items = max(self.items, self.open_items + self.decisions)
        if self.small:
            return (
                f"a {items}-item source: review all of it; what you decide certifies its next "
                "versions (their new and changed rules are linked under the cut these "
                "decisions earn, a changed rule decided again)"
            )
        return (
            f"a {items}-item source: the {CALIBRATION_SAMPLE} items of its calibration "
            "sample decide how much of the rest can be linked automatically"
        )


def source_progress(session: Session) -> list[SourceProgress]:
    """Every source in the store, most open items first, with the open items its
    reviewers should decide first: its calibration sample, CALIBRATION_SAMPLE in all
    with the decisions it has (`policy.calibration_sample`, over the stored confidences
    and chapters: no model is run)."""
    # Small columns only: the queue page shows this on every load, and envelopes are big.
    rows = session.execute(
        select(
            DecisionRow.id,
            DecisionRow.source_key,
            DecisionRow.review_id,
            DecisionRow.confidence,
            DecisionRow.heading_path,
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
    out = []
    for key, open_items in open_by.items():
        seen = decisions_seen(session, key)
        linked = latest_of[key]
        stored = source_cut(session, key)
        latest = latest_cut(session, key) or 1.0
        sample = calibration_sample(
            [r.confidence or 0.0 for r in open_items], max(0, CALIBRATION_SAMPLE - seen), key
        )
        out.append(
            SourceProgress(
                key,
                len(open_items),
                seen,
                max(0, MIN_SOURCE_DECISIONS - seen),
                linked,
                tuple(str(open_items[i].review_id) for i in sample),
                certified_now(session, key, [r.confidence or 0.0 for r in open_items], latest),
                int(sizes.get(key, 0)),
                stored.now(seen) if stored is not None else "",
            )
        )
    return sorted(out, key=lambda p: (-p.open_items, p.key))


def source_sizes(session: Session) -> dict[str, int]:
    """How many sections each source has in the store: open, decided or linked."""
    counted = session.execute(
        select(DecisionRow.source_key, func.count(DecisionRow.id))
        .where(DecisionRow.source_key.is_not(None))
        .group_by(DecisionRow.source_key)
    ).all()
    return {str(key): int(n) for key, n in counted}


def certified_now(
    session: Session,
    source: str,
    pending: list[float],
    cut: float,
    policy: RiskPolicy | None = None,
) -> str:
    """The band the source's reviewed items certify now, in words, from the confidences
    the store holds (each item's first suggestion as its run decided it, no model run):
    where a decision just moved the source's cut, what the next run or `relink` would
    link. `cut`: the one its last run used."""
    policy = policy or source_policy(session, source) or RiskPolicy()
    rows = session.execute(
        select(DecisionRow.confidence, DecisionRow.top_cre_id, HumanDecisionRow)
        .join(HumanDecisionRow, HumanDecisionRow.decision_row_id == DecisionRow.id)
        .where(DecisionRow.source_key == source, HumanDecisionRow.standing())
    ).all()
    reviewed = [
        (confidence or 0.0, human.action != "reject" and top in (human.final_cre_ids or "").split())
        for confidence, top, human in rows
        if not by_bulk(human.record)
    ]
    band = choose_cut(pending, [c for c, _ in reviewed], [ok for _, ok in reviewed], cut, policy)
    if band.basis != "reviewed" or not band.auto_links:
        return ""
    return (
        f"its {band.reviewed} reviewed items above {band.cut:.3f} now certify {band.auto_links} "
        f"open items at >= {band.cut:.3f} (estimated wrong {band.estimated_wrong:.1%}, "
        f"{policy.confidence:.0%} bound {band.upper_bound:.1%}): the next run or `librarian "
        "relink` links them"
    )


def source_of_row(session: Session, row_id: int) -> str | None:
    """The source key of decision row `row_id`."""
    return session.execute(
        select(DecisionRow.source_key).where(DecisionRow.id == row_id)
    ).scalar_one_or_none()


def band_after(session: Session, row_id: int) -> str:
    """`certified_now` for the source of decision row `row_id`: what the workbench says
    after each decision."""
    source = source_of_row(session, row_id)
    if source is None:
        return ""
    pending = session.execute(
        select(DecisionRow.confidence).where(
            DecisionRow.source_key == source,
            DecisionRow.status == REVIEW_REQUIRED,
            DecisionRow.consumed_at.is_(None),
        )
    ).scalars()
    cut = latest_cut(session, source)
    return certified_now(session, source, [c or 0.0 for c in pending], cut or 1.0)


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
