"""The reviewers' queue: export open ReviewItems, import a filled sheet of decisions.

An import is checked row by row before anything is written; one bad row refuses the
whole file, naming the row, so nothing is ever half-applied. Accepted and chosen CREs
become links `librarian train --links DB_URL` learns from.
"""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from pipeline.jsonl import JsonLineError, json_objects
from pipeline.links import Link
from store.decisions import REVIEW_REQUIRED, REVIEWED
from store.tables import Decision, HumanDecision

ACTIONS = ("accept", "choose", "reject")
SUGGESTIONS = 3
REVIEWERS_FRAMEWORK = "reviewers"
# A spreadsheet treats a cell starting with these as a formula.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class ReviewImportError(ValueError):
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
    query = select(Decision).where(Decision.review_id.is_not(None))
    if status == "open":
        query = query.where(Decision.status == REVIEW_REQUIRED)
    elif status == "decided":
        query = query.where(Decision.status == REVIEWED)
    if since is not None:
        query = query.where(Decision.created_at >= since)
    rows = session.execute(query.order_by(Decision.created_at, Decision.id)).scalars()
    return [_item(row) for row in rows]


def _item(row: Decision) -> OpenItem:
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


# --- export -------------------------------------------------------------------------------

CSV_COLUMNS = (
    "review_id", "created_at", "reason", "flags", "chunk_id", "source_url", "text",
    *(f"suggestion_{i}_{part}" for i in range(1, SUGGESTIONS + 1)
      for part in ("cre_id", "name", "confidence")),
    "decision", "cre_id", "note",
)  # fmt: skip


def neutralise(cell: str) -> str:
    """Make a cell inert in a spreadsheet: a leading formula character gets a quote."""
    return "'" + cell if cell.startswith(_FORMULA_START) else cell


def _flat(item: OpenItem) -> dict[str, str]:
    row = {
        "review_id": item.review_id,
        "created_at": item.created_at.isoformat(),
        "reason": item.reason,
        "flags": " ".join(item.flags),
        "chunk_id": item.chunk_id,
        "source_url": item.source_url or "",
        "text": item.text,
        "decision": "",
        "cre_id": "",
        "note": "",
    }
    for i in range(1, SUGGESTIONS + 1):
        s = item.suggestions[i - 1] if i <= len(item.suggestions) else None
        row[f"suggestion_{i}_cre_id"] = s.cre_id if s else ""
        row[f"suggestion_{i}_name"] = s.name if s else ""
        row[f"suggestion_{i}_confidence"] = f"{s.confidence:.3f}" if s else ""
    return row


def to_csv(items: Iterable[OpenItem]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, quoting=csv.QUOTE_ALL)
    writer.writeheader()
    for item in items:
        writer.writerow({k: neutralise(v) for k, v in _flat(item).items()})
    return buffer.getvalue()


def to_jsonl(items: Iterable[OpenItem]) -> str:
    lines = []
    for item in items:
        lines.append(
            json.dumps(
                {
                    "review_id": item.review_id,
                    "created_at": item.created_at.isoformat(),
                    "status": item.status,
                    "reason": item.reason,
                    "flags": list(item.flags),
                    "chunk_id": item.chunk_id,
                    "artifact_id": item.artifact_id,
                    "source_url": item.source_url,
                    "text": item.text,
                    "suggestions": [
                        {"cre_id": s.cre_id, "name": s.name, "confidence": s.confidence}
                        for s in item.suggestions
                    ],
                    "decision": None,
                    "cre_id": None,
                },
                ensure_ascii=False,
            )
        )
    return "".join(line + "\n" for line in lines)


def to_html(items: Sequence[OpenItem], title: str = "librarian: review queue") -> str:
    """One static page: a filterable table with confidence bars and links to the source."""
    e = html.escape
    rows = []
    for item in items:
        bars = "".join(
            f'<div class="s"><span class="id">{e(s.cre_id)}</span> {e(s.name)}'
            f'<div class="bar"><div style="width:{100 * s.confidence:.0f}%"></div></div>'
            f'<span class="c">{s.confidence:.2f}</span></div>'
            for s in item.suggestions
        )
        link = (
            f'<a href="{e(item.source_url)}" rel="noopener noreferrer">source</a>'
            if item.source_url and item.source_url.startswith(("https://", "http://"))
            else ""
        )
        flags = f' <span class="flag">{e(" ".join(item.flags))}</span>' if item.flags else ""
        rows.append(
            f"<tr><td>{e(item.created_at.strftime('%Y-%m-%d %H:%M'))}</td>"
            f"<td>{e(item.reason)}{flags}</td><td class='t'>{e(item.text)}<br>"
            f"<small>{e(item.chunk_id)} {link}</small></td><td>{bars}</td>"
            f"<td><code>{e(item.review_id)}</code></td></tr>"
        )
    return _PAGE.format(title=e(title), count=len(items), rows="\n".join(rows))


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta http-equiv="Content-Security-Policy"
 content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<style>
body{{font:14px system-ui,sans-serif;margin:1.5em;color:#222}}
input{{font-size:15px;padding:.4em;width:28em}}
table{{border-collapse:collapse;width:100%;margin-top:1em}}
th,td{{border-bottom:1px solid #ddd;padding:.5em;vertical-align:top;text-align:left}}
th{{background:#f4f4f4;position:sticky;top:0}}
td.t{{max-width:40em;white-space:pre-wrap}}
.s{{margin-bottom:.3em}} .id{{font-family:monospace}}
.bar{{display:inline-block;width:8em;height:.7em;background:#eee;margin:0 .4em}}
.bar div{{height:100%;background:#3a7}}
.flag{{background:#fdd;color:#900;padding:0 .3em;border-radius:3px}}
</style></head><body>
<h1>{title}</h1>
<p>{count} items, oldest first. Decide in the CSV export
(<code>librarian review export --format csv</code>) and load it with
<code>librarian review import</code>.</p>
<input id="q" placeholder="filter: any text, reason or CRE id" autofocus>
<table><thead><tr><th>created</th><th>reason</th><th>section</th>
<th>suggestions (confidence)</th><th>review id</th></tr></thead>
<tbody id="rows">
{rows}
</tbody></table>
<script>
document.getElementById("q").addEventListener("input", function (ev) {{
  var q = ev.target.value.toLowerCase();
  document.querySelectorAll("#rows tr").forEach(function (tr) {{
    tr.style.display = tr.textContent.toLowerCase().indexOf(q) >= 0 ? "" : "none";
  }});
}});
</script></body></html>
"""


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


def read_sheet(path: Path) -> list[SheetRow]:
    """A filled CSV or JSONL export; rows without a decision stay open."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReviewImportError(f"{path} cannot be read: {exc}") from exc
    records: list[dict[str, Any]] = []
    if path.suffix.lower() == ".jsonl":
        try:
            records = [record for _, record in json_objects(text.splitlines())]
        except JsonLineError as exc:
            raise ReviewImportError(f"{path} row {exc.line}: {exc}") from exc
    elif path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        missing = {"review_id", "decision", "cre_id"} - set(reader.fieldnames or ())
        if missing:
            raise ReviewImportError(f"{path}: no column {', '.join(sorted(missing))}")
        records = list(reader)
    else:
        raise ReviewImportError(f"{path}: a review sheet is .csv or .jsonl")
    return [
        SheetRow(
            number=number,
            review_id=_cell(record.get("review_id")),
            action=_cell(record.get("decision")).lower(),
            cre_id=_cell(record.get("cre_id")),
        )
        for number, record in enumerate(records, start=1)
    ]


def _cell(value: object) -> str:
    # An export neutralised cells with a leading quote; a round trip must undo it.
    text = "" if value is None else str(value).strip()
    return text[1:] if text.startswith("'") and text[1:2] in _FORMULA_START else text


def apply_sheet(
    engine: Engine, rows: Sequence[SheetRow], hub_ids: Collection[str], imported_from: str
) -> ImportResult:
    """Validate every row, then record them all in one transaction (or none)."""
    result = ImportResult()
    seen: set[str] = set()
    with Session(engine) as session, session.begin():
        wanted = [r.review_id for r in rows if r.action]
        found = {
            d.review_id: d
            for d in session.execute(
                select(Decision).where(Decision.review_id.in_(wanted))
            ).scalars()
        }
        planned: list[tuple[SheetRow, Decision, str | None]] = []
        for row in rows:
            if not row.action:
                result.left_open += 1
                continue
            where = f"row {row.number} (review_id {row.review_id or '?'})"
            decision = found.get(row.review_id)
            if row.action not in ACTIONS:
                result.errors.append(
                    f"{where}: decision {row.action!r} is not accept|choose|reject"
                )
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
        if result.errors:
            session.rollback()
            return result
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
    return result


def _chosen_cre(
    row: SheetRow, decision: Decision, hub_ids: Collection[str]
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


def reviewer_links(engine: Engine) -> list[Link]:
    """Accepted and chosen decisions, as curated links from the framework 'reviewers'."""
    with Session(engine) as session:
        rows = session.execute(
            select(HumanDecision)
            .where(HumanDecision.cre_id.is_not(None))
            .order_by(HumanDecision.id)
        ).scalars()
        return [
            Link(REVIEWERS_FRAMEWORK, row.review_id, row.text, str(row.cre_id), curated=True)
            for row in rows
        ]
