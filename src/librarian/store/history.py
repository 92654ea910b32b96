"""What a run reads of a source in the store, for linking it as a whole: the CREs it links
(auto-links and people's approvals and corrections), its reviewers' decisions with the
text they were made on (the latest MAX_REVIEWED per source), and the items earlier windows
stored. Where a source stands for the people reading it is `store/progress.py`."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, and_, or_, select
from sqlalchemy.orm import Session

from librarian.policy import text_digest
from librarian.schemas.records import EarlierItem, Known, Reviewed, SourceHistory
from librarian.store.decisions import LINKED, REVIEW_REQUIRED
from librarian.store.human import by_bulk
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
                DecisionRow.withdrawn_at.is_(None),
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


def source_context(
    session: Session,
    source: str,
    pending: Collection[str],
    document: Collection[str] | None = None,
) -> Known:
    """What a window linking `source` needs of the store: the source's items earlier
    windows stored and nobody has decided yet (the latest MAX_EARLIER, in the order they
    were stored; none that is a `pending` row: a span read again is the window's), and its
    history, in which those items' own links do not count as taken (in a file they would
    be rows of the window, not links it already has). `document`: the chunks of a
    document read whole; an earlier item it no longer holds is none of its items (the
    run withdraws it after linking: it must not take a CRE from, nor count among, the
    requirements the version holds)."""
    rows = session.execute(
        select(
            DecisionRow.id,
            DecisionRow.span_key,
            DecisionRow.text,
            DecisionRow.candidates,
            DecisionRow.chunk_id,
        )
        .where(
            DecisionRow.source_key == source,
            DecisionRow.candidates.is_not(None),
            undecided(),
        )
        .order_by(DecisionRow.id.desc())
        .limit(MAX_EARLIER)
    ).all()
    earlier = [
        (row_id, _earlier(span, text, candidates))
        for row_id, span, text, candidates, chunk in reversed(rows)
        if key_digest(span) not in pending and (document is None or chunk in document)
    ]
    items = tuple(item for _, item in earlier if item is not None)
    leave_out = {row_id for row_id, item in earlier if item is not None}
    history = source_history(session, [source], leave_out).get(source)
    return Known(history, items)


def undecided() -> ColumnElement[bool]:
    """A source's rows no person has decided and still in its document: its open items
    and its links (what a run links its window's rows with, and a cut would link)."""
    return or_(
        and_(DecisionRow.status == LINKED, DecisionRow.withdrawn_at.is_(None)),
        and_(DecisionRow.status == REVIEW_REQUIRED, DecisionRow.consumed_at.is_(None)),
    )


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
    """The latest standing decision of each decided requirement (`counted_once`; undone
    ones left out): approved and corrected items with their CREs, rejected ones with none
    (the first suggestion was wrong, and no CRE fits)."""
    rows = session.execute(
        select(HumanDecisionRow, DecisionRow)
        .join(DecisionRow, DecisionRow.id == HumanDecisionRow.decision_row_id)
        .where(DecisionRow.source_key == source, HumanDecisionRow.standing())
        .order_by(HumanDecisionRow.decided_at.desc(), HumanDecisionRow.id.desc())
    ).all()
    counted = counted_once(
        (item.span_key, item.text, human.record, (human, item)) for human, item in rows
    )
    out: list[Reviewed] = []
    for human, item in counted[:MAX_REVIEWED]:
        cres = tuple((human.final_cre_ids or "").split()) if human.action != "reject" else ()
        locator = (item.envelope or {}).get("knowledge", {}).get("locator", {})
        out.append(Reviewed(item.span_key, item.text, locator.get("title"), cres))
    return out


T = TypeVar("T")


def counted_once(rows: Iterable[tuple[str, str, Mapping[str, Any] | None, T]]) -> list[T]:
    """What a cut may rest on, from standing decisions given latest first as (the item's
    span key, its text, the HumanDecision record, what to keep): each requirement once,
    by its latest standing decision. A requirement is one span key across its text
    versions, and one normalised text (a duplicate is the same item to C.5); another
    decision of either adds nothing. A latest decision made in bulk counts for nothing:
    nobody looked at the item (`store.human.by_bulk`)."""
    keys: set[str] = set()
    texts: set[str] = set()
    out: list[T] = []
    for key, text, record, kept in rows:
        digest = text_digest(text)
        if key in keys or digest in texts:
            continue
        keys.add(key)
        texts.add(digest)
        if not by_bulk(record):
            out.append(kept)
    return out
