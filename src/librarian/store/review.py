"""The reviewers' queue in the database: open ReviewItems, and decisions recorded on them.

An import is checked row by row before anything is written; one bad row refuses the
whole file, naming the row, so nothing is ever half-applied. Accepted and chosen CREs
become links `librarian train --links DB_URL` learns from.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from librarian.errors import InputError
from librarian.learning.links import TrainingLink
from librarian.store.decisions import REVIEW_REQUIRED, REVIEWED
from librarian.store.tables import DecisionRow, HumanDecision

ACTIONS = ("accept", "choose", "reject")
SUGGESTIONS = 3
REVIEWERS_FRAMEWORK = "reviewers"


class ReviewImportError(InputError):
    """A sheet row cannot be applied; the message names the row. Nothing was written."""


@dataclass(frozen=True)
class Suggestion:
    cre_id: str
    name: str
    confidence: float


@dataclass(frozen=True)
class OpenItem:
    review_id: str
    created_at: datetime
    status: str
    reason: str
    chunk_id: str
    artifact_id: str
    text: str
    source_url: str | None
    suggestions: tuple[Suggestion, ...]
    flags: tuple[str, ...] = ()


def review_items(
    session: Session, status: str = "open", since: datetime | None = None
) -> list[OpenItem]:
    """ReviewItems oldest first; `status` is open, decided or all."""
    query = select(DecisionRow).where(DecisionRow.review_id.is_not(None))
    if status == "open":
        query = query.where(DecisionRow.status == REVIEW_REQUIRED)
    elif status == "decided":
        query = query.where(DecisionRow.status == REVIEWED)
    if since is not None:
        query = query.where(DecisionRow.created_at >= since)
    rows = session.execute(query.order_by(DecisionRow.created_at, DecisionRow.id)).scalars()
    return [_item(row) for row in rows]


def _item(row: DecisionRow) -> OpenItem:
    envelope: dict[str, Any] = row.envelope
    names = {
        c["cre_id"]: c["cre_name"] for c in envelope.get("retrieval", {}).get("candidates", [])
    }
    suggestions = tuple(
        Suggestion(s["cre_id"], names.get(s["cre_id"], ""), float(s["confidence"]))
        for s in (envelope.get("suggested_links") or [])[:SUGGESTIONS]
    )
    created = row.created_at if row.created_at.tzinfo else row.created_at.replace(tzinfo=UTC)
    return OpenItem(
        review_id=str(row.review_id),
        created_at=created,
        status="open" if row.status == REVIEW_REQUIRED else "decided",
        reason=str(row.reason_code),
        chunk_id=row.chunk_id,
        artifact_id=row.artifact_id,
        text=row.text,
        source_url=_source_url(envelope.get("knowledge", {})),
        suggestions=suggestions,
        flags=tuple(envelope.get("update_detection", {}).get("adversarial_flags", [])),
    )


def _source_url(knowledge: dict[str, Any]) -> str | None:
    source, locator = knowledge.get("source", {}), knowledge.get("locator", {})
    if source.get("type") == "github" and source.get("repo") and locator.get("path"):
        ref = source.get("commit_sha") or "HEAD"
        return f"https://github.com/{source['repo']}/blob/{ref}/{locator['path']}"
    url = locator.get("url") or source.get("url")
    return str(url) if url else None


# --- import -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SheetRow:
    number: int  # data row number, 1-based (the CSV header is not counted)
    review_id: str
    action: str
    cre_id: str


@dataclass
class ImportResult:
    accepted: int = 0
    chosen: int = 0
    rejected: int = 0
    left_open: int = 0
    errors: list[str] = field(default_factory=list)


def apply_sheet(
    engine: Engine, rows: Sequence[SheetRow], hub_ids: Collection[str], imported_from: str
) -> ImportResult:
    """Validate every row, then record them all in one transaction (or none)."""
    result = ImportResult()
    with Session(engine) as session, session.begin():
        wanted = [r.review_id for r in rows if r.action]
        found = {
            d.review_id: d
            for d in session.execute(
                select(DecisionRow).where(DecisionRow.review_id.in_(wanted))
            ).scalars()
        }
        planned = _plan(rows, found, hub_ids, result)
        if result.errors:
            session.rollback()
            return result
        _record(session, planned, imported_from, result)
    return result


Planned = list[tuple[SheetRow, DecisionRow, str | None]]


def _plan(
    rows: Sequence[SheetRow],
    found: dict[str | None, DecisionRow],
    hub_ids: Collection[str],
    result: ImportResult,
) -> Planned:
    """Each decided row checked; problems go to `result.errors`, naming the row."""
    planned: Planned = []
    seen: set[str] = set()
    for row in rows:
        if not row.action:
            result.left_open += 1
            continue
        where = f"row {row.number} (review_id {row.review_id or '?'})"
        decision = found.get(row.review_id)
        if row.action not in ACTIONS:
            result.errors.append(f"{where}: decision {row.action!r} is not accept|choose|reject")
        elif row.review_id in seen:
            result.errors.append(f"{where}: this review item appears twice in the sheet")
        elif decision is None:
            result.errors.append(f"{where}: no such review item")
        elif decision.status != REVIEW_REQUIRED:
            result.errors.append(f"{where}: the item is not open (already decided)")
        else:
            cre, problem = _chosen_cre(row, decision, hub_ids)
            if problem:
                result.errors.append(f"{where}: {problem}")
            else:
                planned.append((row, decision, cre))
        seen.add(row.review_id)
    return planned


def _record(session: Session, planned: Planned, imported_from: str, result: ImportResult) -> None:
    now = datetime.now(UTC)
    for row, decision, cre in planned:
        knowledge = decision.envelope.get("knowledge", {})
        session.add(
            HumanDecision(
                decision_id=decision.id,
                review_id=row.review_id,
                action=row.action,
                cre_id=cre,
                text=decision.text,
                source_standard=(knowledge.get("source") or {}).get("repo"),
                imported_from=imported_from,
                decided_at=now,
            )
        )
        decision.status = REVIEWED
        decision.review_consumed_at = now
        if row.action == "accept":
            result.accepted += 1
        elif row.action == "choose":
            result.chosen += 1
        else:
            result.rejected += 1


def _chosen_cre(
    row: SheetRow, decision: DecisionRow, hub_ids: Collection[str]
) -> tuple[str | None, str | None]:
    suggested = [s["cre_id"] for s in decision.envelope.get("suggested_links") or []]
    if row.action == "reject":
        return None, None
    if row.action == "accept":
        if not row.cre_id:
            if not suggested:
                return None, "accept needs a suggestion, and this item has none"
            return suggested[0], None
        if row.cre_id not in suggested:
            return None, f"accept names {row.cre_id}, which was not suggested (use choose)"
        return row.cre_id, None
    if not row.cre_id:
        return None, "choose needs a cre_id"
    if row.cre_id not in hub_ids:
        return None, f"unknown CRE id {row.cre_id!r}"
    return row.cre_id, None


def reviewer_links(engine: Engine) -> list[TrainingLink]:
    """Accepted and chosen decisions, as curated links from the framework 'reviewers'."""
    with Session(engine) as session:
        rows = session.execute(
            select(HumanDecision)
            .where(HumanDecision.cre_id.is_not(None))
            .order_by(HumanDecision.id)
        ).scalars()
        return [
            TrainingLink(
                REVIEWERS_FRAMEWORK, row.review_id, row.text, str(row.cre_id), curated=True
            )
            for row in rows
        ]
