"""Review sheets: the open items rendered as CSV, JSONL or one static HTML page, and a
filled sheet (or a HumanDecision JSONL file) read back as decisions for
`store.human.import_decisions`."""

from __future__ import annotations

import base64
import csv
import hashlib
import html
import io
import json
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from librarian.catalogue.hub import cre_url
from librarian.jsonl import JsonLineError, json_objects
from librarian.review.decisions import DecisionRequest
from librarian.schemas.human import HumanDecision, dump_decision
from librarian.store.human import ReviewImportError
from librarian.store.review import OpenItem
from librarian.text import visible

# Suggestions a sheet row carries (a run's --top-n is 5 unless asked otherwise).
SUGGESTIONS = 5
SHEET_ACTIONS = ("accept", "choose", "reject")

# A spreadsheet treats a cell whose first visible character is one of these (after white
# space, and in any width: full-width U+FF1D too) as a formula; a leading tab or line break
# as the start of one.
_FORMULA_START = frozenset("=+-@")


CSV_COLUMNS = (
    "review_id",
    "created_at",
    "section_status",
    "reason",
    "flags",
    "chunk_id",
    "source_url",
    "text",
    *(
        f"suggestion_{i}_{part}"
        for i in range(1, SUGGESTIONS + 1)
        for part in ("cre_id", "name", "confidence")
    ),
    "decision",
    "cre_id",
    "note",
)


def formula_like(cell: str) -> bool:
    if cell[:1] in ("\t", "\r", "\n"):
        return True
    for char in cell:
        if char.isspace() or unicodedata.category(char) in ("Cc", "Cf"):
            continue
        return unicodedata.normalize("NFKC", char) in _FORMULA_START
    return False


def neutralise(cell: str) -> str:
    """Make a cell inert in a spreadsheet: its bidi, zero-width and control characters
    shown as ⟨U+…⟩ (a right-to-left override in a title reorders what a person reads),
    and one that could start a formula gets a quote."""
    cell = visible(cell)
    return "'" + cell if formula_like(cell) else cell


# A stored decision's action, as a sheet's `decision` column says it (`SHEET_ACTIONS`).
SHEET_WORD = {"approve": "accept", "correct": "choose", "reject": "reject"}


def _decided(item: OpenItem) -> tuple[str, str, str]:
    """A decided item's decision, CREs and note as a sheet holds them ("" for an open one)."""
    if item.decided_as is None:
        return "", "", ""
    action, cres, note = item.decided_as
    return SHEET_WORD.get(action, action), cres, note


def _flat(item: OpenItem) -> dict[str, str]:
    decision, cres, note = _decided(item)
    row = {
        "review_id": item.review_id,
        "created_at": item.created_at.isoformat(),
        "section_status": item.section_status,
        "reason": item.reason,
        "flags": " ".join(item.flags),
        "chunk_id": item.chunk_id,
        "source_url": item.source_url or "",
        "text": visible(item.text),
        "decision": decision,
        "cre_id": cres,
        "note": note,
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
        decision, cres, note = _decided(item)
        lines.append(
            json.dumps(
                {
                    "review_id": item.review_id,
                    "created_at": item.created_at.isoformat(),
                    "status": item.status,
                    "section_status": item.section_status,
                    "reason": item.reason,
                    "flags": list(item.flags),
                    "chunk_id": item.chunk_id,
                    "artifact_id": item.artifact_id,
                    "source_url": item.source_url,
                    "text": visible(item.text),
                    "suggestions": [
                        {"cre_id": s.cre_id, "name": s.name, "confidence": s.confidence}
                        for s in item.suggestions
                    ],
                    "decision": decision or None,
                    "cre_id": cres or None,
                    "note": note or None,
                },
                ensure_ascii=False,
            )
        )
    return "".join(line + "\n" for line in lines)


def to_human_decisions(decisions: Iterable[HumanDecision]) -> str:
    """Decided items as RFC HumanDecision JSONL: what a downstream graph writer reads."""
    return "".join(json.dumps(dump_decision(d), ensure_ascii=False) + "\n" for d in decisions)


def to_html(items: Sequence[OpenItem], title: str = "librarian: review queue") -> str:
    """One static page: a filterable table with confidence bars and links to the source.
    No inline style attribute, and the one script and style sheet allowed by hash."""
    e = html.escape
    rows = []
    for item in items:
        bars = "".join(
            f'<div class="s"><a class="id" href="{e(cre_url(s.cre_id))}" '
            f'rel="noopener noreferrer">{e(s.cre_id)}</a> {e(s.name)} '
            f'<meter min="0" max="1" value="{s.confidence:.3f}"></meter> '
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
            f"<td>{e(item.section_status)}<br>{e(item.reason)}{flags}</td>"
            f"<td class='t'>{e(visible(item.text))}<br>"
            f"<small>{e(item.chunk_id)} {link}</small></td><td>{bars}</td>"
            f"<td><code>{e(item.review_id)}</code></td></tr>"
        )
    return _PAGE.format(
        title=e(title),
        count=len(items),
        rows="\n".join(rows),
        style=_STYLE,
        script=_SCRIPT,
        csp=f"default-src 'none'; style-src '{_sha256(_STYLE)}'; script-src '{_sha256(_SCRIPT)}'",
    )


def _sha256(source: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()


_STYLE = """
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
input{font-size:15px;padding:.4em;width:28em}
table{border-collapse:collapse;width:100%;margin-top:1em}
th,td{border-bottom:1px solid #ddd;padding:.5em;vertical-align:top;text-align:left}
th{background:#f4f4f4;position:sticky;top:0}
td.t{max-width:40em;white-space:pre-wrap}
.s{margin-bottom:.3em} .id{font-family:monospace}
meter{width:8em}
.flag{background:#fdd;color:#900;padding:0 .3em;border-radius:3px}
.hidden{display:none}
"""
_SCRIPT = """
document.getElementById("q").addEventListener("input", function (ev) {
  var q = ev.target.value.toLowerCase();
  document.querySelectorAll("#rows tr").forEach(function (tr) {
    tr.classList.toggle("hidden", tr.textContent.toLowerCase().indexOf(q) < 0);
  });
});
"""


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta http-equiv="Content-Security-Policy" content="{csp}">
<style>{style}</style></head><body>
<h1>{title}</h1>
<p>{count} items, oldest first. Decide in the CSV export
(<code>librarian review export --format csv</code>) and load it with
<code>librarian review import</code>.</p>
<input id="q" placeholder="filter: any text, reason or CRE id" autofocus>
<table><thead><tr><th>created</th><th>status, reason</th><th>section</th>
<th>suggestions (confidence)</th><th>review id</th></tr></thead>
<tbody id="rows">
{rows}
</tbody></table>
<script>{script}</script></body></html>
"""


@dataclass(frozen=True)
class SheetRow:
    number: int  # data row number, 1-based (the CSV header is not counted)
    review_id: str
    action: str  # accept | choose | reject, or "" (left open)
    cre_id: str  # choose: one or several CRE ids, separated by spaces or commas
    note: str = ""


Incoming = list[tuple[str, DecisionRequest | HumanDecision]]


@dataclass
class DecisionFile:
    """A filled sheet or a HumanDecision file, read: the decisions in it (with where each
    came from), the rows left open, and the rows that cannot be read."""

    incoming: Incoming = field(default_factory=list)
    left_open: int = 0
    errors: list[str] = field(default_factory=list)


def read_decisions(path: Path, reviewer: str | None) -> DecisionFile:
    """A filled CSV/JSONL export (its decisions are `reviewer`'s), or HumanDecision JSONL
    (`librarian review export --format human-decision`, or another tool's)."""
    records = _records(path)
    if path.suffix.lower() == ".jsonl" and records and "decision_id" in records[0]:
        return _human_decisions(records)
    rows = [_sheet_row(number, record) for number, record in enumerate(records, start=1)]
    result = DecisionFile(left_open=sum(1 for r in rows if not r.action))
    decided = [r for r in rows if r.action]
    if decided and not (reviewer or "").strip():
        raise ReviewImportError(f"{path}: a sheet's decisions need a reviewer: --reviewer NAME")
    for row in decided:
        where = f"row {row.number} (review_id {row.review_id or '?'})"
        if row.action not in SHEET_ACTIONS:
            result.errors.append(f"{where}: decision {row.action!r} is not accept|choose|reject")
            continue
        result.incoming.append((where, _request(row, str(reviewer))))
    return result


def _request(row: SheetRow, reviewer: str) -> DecisionRequest:
    cre_ids = tuple(row.cre_id.replace(",", " ").split())
    if row.action == "accept" and not cre_ids:
        return DecisionRequest(row.review_id, "approve", reviewer, note=row.note)
    if row.action == "reject":
        return DecisionRequest(row.review_id, "reject", reviewer, note=row.note)
    return DecisionRequest(row.review_id, "choose", reviewer, cre_ids, note=row.note)


def _human_decisions(records: list[dict[str, Any]]) -> DecisionFile:
    result = DecisionFile()
    for number, record in enumerate(records, start=1):
        where = f"row {number} (review_id {record.get('review_id', '?')})"
        try:
            result.incoming.append((where, HumanDecision.model_validate(record)))
        except ValidationError as exc:
            first = exc.errors()[0]
            at = ".".join(str(p) for p in first["loc"]) or "(top)"
            result.errors.append(f"{where}: not a HumanDecision: {at}: {first['msg']}")
    return result


def _records(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReviewImportError(f"{path} cannot be read: {exc}") from exc
    if path.suffix.lower() == ".jsonl":
        try:
            return [record for _, record in json_objects(text.splitlines())]
        except JsonLineError as exc:
            raise ReviewImportError(f"{path} row {exc.line}: {exc.reason}") from exc
    if path.suffix.lower() == ".csv":
        return _csv_records(path, text)
    raise ReviewImportError(f"{path}: a review sheet is .csv or .jsonl")


def _sheet_row(number: int, record: dict[str, Any]) -> SheetRow:
    return SheetRow(
        number=number,
        review_id=_cell(record.get("review_id")),
        action=_cell(record.get("decision")).lower(),
        cre_id=_cell(record.get("cre_id")),
        note=_cell(record.get("note")),
    )


def _csv_records(path: Path, text: str) -> list[dict[str, Any]]:
    # A section's text may be far longer than csv's default 128 KiB field limit.
    limit = csv.field_size_limit(sys.maxsize)
    try:
        reader = csv.DictReader(io.StringIO(text))
        missing = {"review_id", "decision", "cre_id"} - set(reader.fieldnames or ())
        if missing:
            raise ReviewImportError(f"{path}: no column {', '.join(sorted(missing))}")
        return list(reader)
    except csv.Error as exc:
        raise ReviewImportError(f"{path}: not a CSV sheet: {exc}") from exc
    finally:
        csv.field_size_limit(limit)


def _cell(value: object) -> str:
    # An export neutralised cells with a leading quote; a round trip must undo it.
    text = "" if value is None else str(value).strip()
    return text[1:] if text.startswith("'") and formula_like(text[1:]) else text
