"""The review decision rules: what approve, correct (choose) and reject mean, and the
RFC HumanDecision each becomes (a correction carries a LossEvent). Recording them is the
store's (`store/human.py`: the compare-and-set, undo); this module decides what to record.

An import (a sheet, or HumanDecision JSONL) is checked whole before anything is
written: one bad row refuses it, naming the row; a decision identical to the stored one
changes nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Literal

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from librarian.schemas.envelopes import Link
from librarian.schemas.human import MAX_REVIEWER_CHARS, HumanDecision, LossEvent, Rejection, Ui
from librarian.store.human import (
    BULK,
    WORKBENCH,
    AlreadyDecided,
    ReviewError,
    by_bulk,
    open_row,
    same_as_standing,
    standing_decision,
    standing_same,
    store_decision,
    supersede,
)
from librarian.store.tables import DecisionRow, HumanDecisionRow

REJECTION_CODES = ("NO_CRE_FITS", "NOT_SECURITY_KNOWLEDGE")
# choose: CREs the reviewer picked (an approve when that is just the first suggestion).
RequestAction = Literal["approve", "choose", "reject"]


@dataclass(frozen=True)
class DecisionRequest:
    """What a reviewer asked: approve the first suggestion, choose CREs (one or several),
    or reject with a reason; with a note, and how it was decided (keys, time taken)."""

    review_id: str
    action: RequestAction
    reviewer: str
    cre_ids: tuple[str, ...] = ()
    rejection_code: str | None = None
    note: str | None = None
    ui: Ui | None = None


def build_decision(
    row: DecisionRow, request: DecisionRequest, hub_ids: Collection[str], now: datetime
) -> HumanDecision:
    """The RFC HumanDecision for `request` on `row`, or ReviewError saying what is wrong."""
    reviewer = request.reviewer.strip()
    if not reviewer:
        raise ReviewError("no decision without a reviewer name")
    if len(reviewer) > MAX_REVIEWER_CHARS:
        raise ReviewError(
            f"the reviewer name is {len(reviewer)} characters; at most {MAX_REVIEWER_CHARS}"
        )
    suggested = [s["cre_id"] for s in row.envelope.get("suggested_links") or []]
    top = (row.envelope.get("suggested_links") or [None])[0]
    note = (request.note or "").strip() or None
    base = {
        "review_id": str(row.review_id),
        "chunk_id": row.chunk_id,
        "pipeline_run_id": row.pipeline_run_id,
        "decided_at": now,
        "decided_by": reviewer,
        "ui": request.ui,
    }
    if request.action == "reject":
        code = request.rejection_code or "NO_CRE_FITS"
        if code not in REJECTION_CODES:
            known = ", ".join(REJECTION_CODES)
            raise ReviewError(f"reject reason {code!r} is not one of {known}")
        rejection = Rejection(reason_code=code, reason_message=note)
        return HumanDecision(**base, action="reject", rejection=rejection)
    chosen = _chosen(request, suggested, hub_ids)
    links = [
        Link(
            cre_id=c,
            link_type="LinkedTo",
            confidence=1.0,
            rationale=f"{'approved' if chosen == suggested[:1] else 'chosen'} by {reviewer}"
            + (f": {note}" if note else ""),
        )
        for c in chosen
    ]
    if suggested and chosen == suggested[:1]:
        return HumanDecision(**base, action="approve", final_links=links)
    if suggested and suggested[0] in chosen:
        # More CREs than the first suggestion, the first among them: a correction, but
        # nothing was predicted wrong (the RFC makes the loss event optional).
        return HumanDecision(**base, action="correct", final_links=links)
    loss = LossEvent(
        input_snapshot={
            "chunk_id": row.chunk_id,
            "review_id": row.review_id,
            "text": row.text[:2000],
        },
        wrong_prediction={"cre_id": top["cre_id"], "confidence": top["confidence"]} if top else {},
        correct_label={"cre_ids": list(chosen)},
        notes=note,
    )
    return HumanDecision(**base, action="correct", final_links=links, loss_event=loss)


def _chosen(request: DecisionRequest, suggested: list[str], hub_ids: Collection[str]) -> list[str]:
    if request.action == "approve":
        if not suggested:
            raise ReviewError("approve needs a suggestion, and this item has none (choose a CRE)")
        return suggested[:1]
    chosen = list(dict.fromkeys(c.strip() for c in request.cre_ids if c.strip()))
    if not chosen:
        raise ReviewError("choose needs at least one CRE id")
    unknown = [c for c in chosen if c not in hub_ids]
    if unknown:
        raise ReviewError(f"unknown CRE id {unknown[0]!r}")
    return chosen


def decide(
    session: Session, request: DecisionRequest, hub_ids: Collection[str], source: str = WORKBENCH
) -> HumanDecision:
    """Record a decision and close the item, in the caller's transaction (it commits)."""
    row = open_row(session, request.review_id)
    decision = build_decision(row, request, hub_ids, datetime.now(UTC))
    store_decision(session, row, decision, request.note, source)
    return decision


def change(
    session: Session,
    request: DecisionRequest,
    hub_ids: Collection[str],
    leads: Collection[str] = (),
    source: str = WORKBENCH,
) -> HumanDecision:
    """Change the decision that stands on a decided item, in the caller's transaction: a
    new HumanDecision supersedes it, and the old one is kept. Its reviewer may change it;
    a lead (`leads`) may change anyone's."""
    row = open_row(session, request.review_id)
    old = changeable(session, row, request.reviewer, leads)
    decision = build_decision(row, request, hub_ids, datetime.now(UTC))
    if same_as_standing(old, decision):
        raise ReviewError(f"{row.review_id}: that is the decision that stands; nothing changed")
    supersede(session, row, old, decision, request.note, source)
    return decision


def changeable(
    session: Session, row: DecisionRow, reviewer: str, leads: Collection[str]
) -> HumanDecisionRow:
    """The standing decision `reviewer` may change, or ReviewError saying why not."""
    old = standing_decision(session, row)
    if old is None:
        if row.consumed_at is None:
            raise ReviewError(f"{row.review_id} is open: decide it; there is nothing to change")
        raise ReviewError(f"{row.review_id} was decided by another review tool; change it there")
    if old.decided_by != reviewer.strip() and reviewer.strip() not in leads:
        raise ReviewError(
            f"{row.review_id} was decided by {old.decided_by}: only they or a lead "
            "(`review serve --lead NAME`) may change it"
        )
    return old


@dataclass
class ImportResult:
    approved: int = 0
    corrected: int = 0
    rejected: int = 0
    unchanged: int = 0  # identical to the stored decision: nothing to do
    changed: int = 0  # superseded a standing decision (`review import --change`)
    left_open: int = 0
    bulk: int = 0  # approvals recorded as bulk: the import approved every row (`in_bulk`)
    errors: list[str] = field(default_factory=list)

    def count(self, action: str) -> None:
        if action == "approve":
            self.approved += 1
        elif action == "correct":
            self.corrected += 1
        else:
            self.rejected += 1


@dataclass(frozen=True)
class Planned:
    row: DecisionRow
    decision: HumanDecision
    note: str | None
    replaces: HumanDecisionRow | None = None  # the standing decision it changes


def import_decisions(
    engine: Engine,
    incoming: Sequence[tuple[str, DecisionRequest | HumanDecision]],
    hub_ids: Collection[str],
    source: str,
    leads: Collection[str] | None = None,
    importer: str | None = None,
) -> ImportResult:
    """Check every (where, decision) first, then record them all in one transaction, or
    none. `where` names the row in errors ("row 3 (review_id ...)"). With `leads` (a
    change import), a decision that differs from the standing one supersedes it, when the
    importer made that one or is a lead; without, it is refused. `importer`: who imports
    (`--reviewer`); a decision file's `decided_by` other than theirs is refused unless
    they lead. A change import needs one. Every decision recorded is the importer's: a
    decision file's `decided_by` is kept in its note, as where it came from, never as who
    decided. An import that approves the first suggestion of every row is recorded as
    bulk approvals, as the workbench's "approve all" is (`in_bulk`)."""
    result = ImportResult()
    if importer:
        source = f"{source} (imported by {importer.strip()})"
    with Session(engine) as session, session.begin():
        planned, every_approve = _plan(session, incoming, hub_ids, result, leads, importer)
        if result.errors:
            session.rollback()
            return result
        if every_approve:
            planned = [in_bulk(item) for item in planned]
            result.bulk = len(planned)
        for item in planned:
            if item.replaces is None:
                store_decision(session, item.row, item.decision, item.note, source)
            else:
                supersede(session, item.row, item.replaces, item.decision, item.note, source)
                result.changed += 1
            result.count(item.decision.action)
    return result


def _plan(
    session: Session,
    incoming: Sequence[tuple[str, DecisionRequest | HumanDecision]],
    hub_ids: Collection[str],
    result: ImportResult,
    leads: Collection[str] | None,
    importer: str | None = None,
) -> tuple[list[Planned], bool]:
    """The decisions to record, and whether every decision of the import (those already
    standing too) approves its item's first suggestion."""
    planned: list[Planned] = []
    seen: set[str] = set()
    ids: dict[str, str] = {}
    actions: set[str] = set()
    now = datetime.now(UTC)
    for where, asked in incoming:
        try:
            row = _item_once(session, asked, seen)
            if isinstance(asked, HumanDecision):
                _check_decision_id(session, asked, ids, where)
                _check_decider(asked, importer, leads)
            decision = _as_decision(row, asked, hub_ids, now)
            actions.add(decision.action)
            try:
                if standing_same(session, row, decision):
                    result.unchanged += 1
                    continue
                replaces = None
            except AlreadyDecided:
                if leads is None:
                    raise
                replaces = changeable(session, row, _changer(asked, importer), leads)
            decision, note = _recorded_as(asked, decision, importer, where)
            planned.append(Planned(row, decision, note, replaces))
        except ReviewError as exc:
            result.errors.append(f"{where}: {exc}")
    return planned, actions == {"approve"}


def in_bulk(item: Planned) -> Planned:
    """`item` recorded as a bulk approval: a file that approves every row's first
    suggestion is an "approve all" (nobody is known to have weighed each item), which
    certifies no cut and counts in no agreement figure (`store.human.by_bulk`)."""
    ui = Ui(keybind_used=BULK)
    return replace(item, decision=item.decision.model_copy(update={"ui": ui}))


def _recorded_as(
    asked: DecisionRequest | HumanDecision,
    decision: HumanDecision,
    importer: str | None,
    where: str,
) -> tuple[HumanDecision, str | None]:
    """The decision as it is recorded, with its note: the importer's. A decision file's
    `decided_by` is what the file says, not who the store knows decided: it is kept in
    the note, where it came from (`where`)."""
    if isinstance(asked, DecisionRequest):
        return decision, asked.note
    who = (importer or "").strip()
    if not who:
        raise ReviewError(
            "a decision file's decisions are recorded as the importer's, and this import "
            "names none: it needs who is changing or recording them (--reviewer NAME)"
        )
    if len(who) > MAX_REVIEWER_CHARS:
        raise ReviewError(
            f"the reviewer name is {len(who)} characters; at most {MAX_REVIEWER_CHARS}"
        )
    note = (
        None
        if asked.decided_by == who
        else f"the file's {where} says decided by {asked.decided_by}"
    )
    return decision.model_copy(update={"decided_by": who}), note


def _changer(asked: DecisionRequest | HumanDecision, importer: str | None) -> str:
    """Who changes a standing decision: the importing reviewer (a sheet's rows are
    theirs); a decision file's `decided_by` is never taken for it."""
    who = (importer or "").strip() or (asked.reviewer if isinstance(asked, DecisionRequest) else "")
    if not who:
        raise ReviewError("a change from a decision file needs who is changing: --reviewer NAME")
    return who


def _check_decider(
    asked: HumanDecision, importer: str | None, leads: Collection[str] | None
) -> None:
    """A file's `decided_by` is believed only from its own reviewer, or a lead."""
    who = (importer or "").strip()
    if who and asked.decided_by != who and who not in (leads or ()):
        raise ReviewError(
            f"decided by {asked.decided_by}, not by the importing reviewer {who}: only a "
            "lead (--lead NAME) imports another reviewer's decisions"
        )


def _item_once(
    session: Session, asked: DecisionRequest | HumanDecision, seen: set[str]
) -> DecisionRow:
    """The item a file's decision is for: in the store, and decided once in the file."""
    if asked.review_id in seen:
        raise ReviewError("this review item appears twice")
    seen.add(asked.review_id)
    return open_row(session, asked.review_id)


def _as_decision(
    row: DecisionRow,
    asked: DecisionRequest | HumanDecision,
    hub_ids: Collection[str],
    now: datetime,
) -> HumanDecision:
    if isinstance(asked, DecisionRequest):
        return build_decision(row, asked, hub_ids, now)
    unknown = [c for c in asked.cre_ids if c not in hub_ids]
    if unknown:
        raise ReviewError(f"unknown CRE id {unknown[0]!r}")
    for name, theirs, ours in (
        ("chunk_id", asked.chunk_id, row.chunk_id),
        ("pipeline_run_id", asked.pipeline_run_id, row.pipeline_run_id),
    ):
        if theirs != ours:
            raise ReviewError(f"{name} {theirs!r} is not this item's ({ours!r})")
    suggested = [s["cre_id"] for s in row.envelope.get("suggested_links") or []]
    if asked.action == "approve" and list(asked.cre_ids) != suggested[:1]:
        first = suggested[0] if suggested else "none"
        raise ReviewError(
            f"approve of {', '.join(asked.cre_ids)}, but the item's first suggestion is "
            f"{first}: a decision for other CREs is a correct"
        )
    return asked


def _check_decision_id(
    session: Session, asked: HumanDecision, ids: dict[str, str], where: str
) -> None:
    """One decision, one id: a file reusing one, or an id the store holds already (an
    export imported again after an undo), is named, not a database error."""
    if asked.decision_id in ids:
        raise ReviewError(f"decision_id {asked.decision_id} is also {ids[asked.decision_id]}'s")
    ids[asked.decision_id] = where
    stored = session.execute(
        select(
            HumanDecisionRow.undone_at, HumanDecisionRow.superseded_at, HumanDecisionRow.review_id
        ).where(HumanDecisionRow.decision_uuid == asked.decision_id)
    ).first()
    if stored is None:
        return
    if stored.superseded_at is not None and stored.undone_at is None:
        raise ReviewError(
            f"decision {asked.decision_id} was changed since (a later decision on this item "
            "stands): export again to see the one that stands, or give a new decision_id"
        )
    if stored.undone_at is not None:
        raise ReviewError(
            f"decision {asked.decision_id} was recorded and then undone; to decide this item "
            "again, give the decision a new decision_id (or decide it in the workbench)"
        )
    if stored.review_id != asked.review_id:
        raise ReviewError(
            f"decision_id {asked.decision_id} is already recorded for item {stored.review_id}"
        )


@dataclass
class Learnable:
    """What training may learn from a decision file."""

    links: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # one line each, naming the row
    undone: int = 0  # decisions the store records as undone: never learned
    bulk: int = 0  # bulk approvals (the store's record): nobody looked one by one
    superseded: int = 0  # decisions the store records as changed since
    contradicted: int = 0  # rows that disagree with the decision the store holds standing


def learnable(
    session: Session,
    incoming: Sequence[tuple[str, DecisionRequest | HumanDecision]],
    hub_ids: Collection[str],
) -> Learnable:
    """A decision file's decisions checked as `review import` checks them (the item is in
    the store, its chunk and run are the decision's, the CREs are known, an approve names
    the first suggestion, a decision id is the stored decision's), each as (review id, the
    item's text as the store holds it, the CREs). A decision the store records as undone
    is left out and counted: the store is the truth, not an export taken before the undo."""
    out = Learnable()
    seen: set[str] = set()
    now = datetime.now(UTC)
    for where, asked in incoming:
        try:
            row = _item_once(session, asked, seen)
            if undone_in_store(session, row, asked):
                out.undone += 1
                continue
            decision = _as_decision(row, asked, hub_ids, now)
            if isinstance(asked, HumanDecision):
                _as_stored(session, asked)
            if not _stands(session, row, asked, decision, out):
                continue
            if decision.action != "reject":
                out.links.append((str(row.review_id), row.text, tuple(decision.cre_ids)))
        except ReviewError as exc:
            out.refused.append(f"{where}: {exc}")
    return out


def _stands(
    session: Session,
    row: DecisionRow,
    asked: DecisionRequest | HumanDecision,
    decision: HumanDecision,
    out: Learnable,
) -> bool:
    """Whether a file's decision is what the store holds standing for its item (or the
    item has none yet); what is left out is counted. Bulk is the store's record: a file
    cannot make a bulk approval learnable by editing its `ui`."""
    standing = standing_decision(session, row)
    if isinstance(asked, HumanDecision):
        stored = session.execute(
            select(HumanDecisionRow).where(HumanDecisionRow.decision_uuid == asked.decision_id)
        ).scalar_one_or_none()
        if stored is not None and standing is not None and stored.id != standing.id:
            out.superseded += 1
            return False
        if stored is None and asked.ui is not None and asked.ui.keybind_used == BULK:
            out.bulk += 1
            return False
    if standing is None:
        return True
    if not same_as_standing(standing, decision):
        out.contradicted += 1
        return False
    if by_bulk(standing.record):
        out.bulk += 1
        return False
    return True


def undone_in_store(
    session: Session, row: DecisionRow, asked: DecisionRequest | HumanDecision
) -> bool:
    """The store took this decision back: the decision itself (by its id) was undone, or
    (a sheet's row, which has no id) the item's decisions were all undone."""
    query = select(HumanDecisionRow.undone_at).where(HumanDecisionRow.decision_row_id == row.id)
    if isinstance(asked, HumanDecision):
        query = query.where(HumanDecisionRow.decision_uuid == asked.decision_id)
    stored = list(session.execute(query).scalars())
    return bool(stored) and all(at is not None for at in stored)


def _as_stored(session: Session, asked: HumanDecision) -> None:
    """A decision id the store holds is that decision: the same item, reviewer and CREs."""
    stored = session.execute(
        select(HumanDecisionRow).where(HumanDecisionRow.decision_uuid == asked.decision_id)
    ).scalar_one_or_none()
    if stored is None:
        return
    theirs = (stored.review_id, stored.decided_by, (stored.final_cre_ids or "").split())
    if theirs != (asked.review_id, asked.decided_by, list(asked.cre_ids)):
        raise ReviewError(
            f"decision {asked.decision_id} differs from the one recorded under that id "
            f"(item {stored.review_id}, by {stored.decided_by})"
        )
