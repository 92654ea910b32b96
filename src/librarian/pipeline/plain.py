"""Plain inputs: a team's own requirements as a simple table (CSV, or JSONL with `id`,
`text`, optional `title`, `url`, `section_path`), a Markdown, Word or PDF document split
by heading. Each shape (`pipeline/shapes/`) yields typed rows; each row becomes a
KnowledgeItem here, validated as one (`ingest.parse_item`: the same validation,
accounting and envelopes as the queue shapes, and no JSON written to be parsed back); a
rejected row keeps that item's JSON as its raw input.

Provenance is synthetic but stable: the source is the document (`--source NAME`, else
the file's name with its directory's, `a/reqs.csv`) at the file's modification time; a
row is `<source>#<id>`; the artifact is the source, so a row whose text changes under the
same id is an update. The envelope says which file and which hash
(`knowledge.source.url`: `urn:librarian:plain:<sha256>`); a row without a URL of its own
is located as `urn:librarian:row:<source>:<id>`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from librarian.pipeline.aligned import Item, align
from librarian.pipeline.ingest import Parsed, parse_item, parse_line
from librarian.pipeline.shapes import plain_shape
from librarian.pipeline.shapes.rows import (
    PlainInputError,
    PlainRow,
    PlainShape,
    Split,
    Unreadable,
    title_of,
)
from librarian.schemas.records import (
    RejectCode,
    Rejection,
    Skip,
    SkipCode,
    plain_locator_id,
    rejected,
)
from librarian.text import quoted

__all__ = ["PlainInputError", "PlainRows", "PlainSource", "is_plain", "plain_rows"]


@dataclass(frozen=True)
class PlainSource:
    name: str  # what the envelopes call the document
    sha256: str  # of the file's bytes
    modified: datetime

    @classmethod
    def of(cls, path: Path, name: str | None) -> PlainSource:
        data = path.read_bytes()
        modified = datetime.fromtimestamp(path.stat().st_mtime, UTC).replace(microsecond=0)
        return cls(name or default_name(path), hashlib.sha256(data).hexdigest(), modified)

    @property
    def artifact_id(self) -> str:
        return artifact_of(self.name)

    @property
    def urn(self) -> str:
        return f"urn:librarian:plain:{self.sha256}"


def artifact_of(document: str) -> str:
    """The artifact id of the document named `document`, in each of its rows."""
    return f"plain:{document}"


def default_name(path: Path) -> str:
    """The document a file is, without --source: its name and its directory's, so that
    `a/reqs.csv` and `b/reqs.csv` are two documents (their rows' ids would collide)."""
    folder = path.resolve().parent.name
    return f"{folder}/{path.name}" if folder else path.name


def is_plain(path: Path) -> bool:
    """A file one of the plain shapes reads whole (a JSONL file: when its first row is the
    simple table shape)."""
    return plain_shape(path) is not None


@dataclass
class PlainRows:
    """A plain input as records, in order: each row validated into a Section or refused,
    each note skipped (NOT_A_REQUIREMENT), each line the shape could not read as a row (a
    CSV row with more or fewer cells than its header) rejected with why. `lines`: every
    line with what a refused one keeps as its raw input (the row's KnowledgeItem as JSON,
    or the line as the shape read it); empty for a line read. `items`: each row's
    KnowledgeItem as built, by line."""

    lines: list[tuple[int, bytes]]
    records: dict[int, Parsed]
    items: dict[int, dict[str, Any]]
    split: Split | None = None  # how a document shape split it (None: a table shape)
    artifact_id: str = ""  # the document's, in every row
    chunk_ids: frozenset[str] = frozenset()  # every row's: what this version holds
    version: list[str] = field(default_factory=list)  # how it matched the last (`aligned`)


def plain_rows(
    path: Path,
    source_name: str | None = None,
    shape: PlainShape | None = None,
    previous: Sequence[Item] = (),
    read: Sequence[PlainRow | Unreadable | Split] | None = None,
) -> PlainRows:
    """Every row or block of a plain input as its record. `shape`: the one its source found
    (None: found here). `previous`: the document's items as last stored (their identities
    and texts), which this version's are matched to by text (`aligned`). `read`: what the
    shape read of the file already (`shaped`), not read again."""
    source = PlainSource.of(path, source_name)
    rows = PlainRows([], {}, {}, artifact_id=source.artifact_id)
    chunks: set[str] = set()
    read = shaped(path, shape) if read is None else read
    identities = _identities(rows, read, previous)
    for row in read:
        if isinstance(row, Split):
            rows.split = row
        elif isinstance(row, Unreadable):
            _unreadable(rows, row)
        else:
            row = replace(row, identity=identities.get(id(row)))
            item = knowledge_item(row, source)
            chunks.add(item.get("chunk_id", ""))
            _read(rows, row, item)
    rows.chunk_ids = frozenset(chunks - {""})
    return rows


def shaped(path: Path, shape: PlainShape | None = None) -> list[PlainRow | Unreadable | Split]:
    """What the file's shape reads of it, whole (at most MAX_ITEMS rows: a document is
    matched whole to its last version)."""
    shape = shape or plain_shape(path)
    if shape is None:
        raise PlainInputError(f"{path}: no plain shape reads this file")
    return list(shape.read(path))


def _identities(
    rows: PlainRows, read: Sequence[PlainRow | Unreadable | Split], previous: Sequence[Item]
) -> dict[int, str]:
    """Each item row's identity in the document, matched to its last version by text (by
    the row's `id()`); none when there is no last version."""
    if not previous:
        return {}
    linked = [r for r in read if isinstance(r, PlainRow) and r.note is None and r.id]
    found = align([Item(r.id or "", r.text or "") for r in linked], previous)
    rows.version = found.lines()
    return {id(r): identity for r, identity in zip(linked, found.identities, strict=True)}


def _unreadable(rows: PlainRows, row: Unreadable) -> None:
    raw = row.raw.encode("utf-8", "surrogateescape")
    rows.lines.append((row.line, raw))
    if row.why is None:  # refused as ingest refuses any bad line (not JSON, say)
        rows.records[row.line] = parse_line(row.line, raw)
    else:
        rows.records[row.line] = rejected(row.line, RejectCode.MALFORMED_ROW, row.why)


def _read(rows: PlainRows, row: PlainRow, item: dict[str, Any]) -> None:
    if row.note is not None:
        why = f"{_where(row)}: {row.note}: {quoted(row.text)}"
        record: Parsed = Skip(line=row.line, reason=SkipCode.NOT_A_REQUIREMENT, message=why)
    else:
        record = parse_item(row.line, item)
    refused = isinstance(record, Rejection)
    if isinstance(record, Rejection):  # said where the items say it, with its words
        why = record.message.removeprefix(f"line {row.line}: ")
        record = record.model_copy(update={"message": f"{_where(row)}: {why}: {quoted(row.text)}"})
    rows.items[row.line] = item
    rows.lines.append((row.line, json.dumps(item).encode() if refused else b""))
    rows.records[row.line] = record


def _where(row: PlainRow) -> str:
    """Where a row is, as its items name it ("paragraph 11", "page 3, line 12")."""
    return row.where or f"line {row.line}"


def knowledge_item(row: PlainRow, source: PlainSource) -> dict[str, Any]:
    """A KnowledgeItem for one plain row; what a row lacks is left for validation to name."""
    row_id = row.id or ""
    key = row.identity or row_id  # what a new version matched it to (`aligned`), or its id
    where = plain_locator_id(source.name, row_id, row.where) if row_id else None
    # The row's own URL, else one naming the document and the row: stable when the file
    # changes, so a row edited under the same id is an update of itself.
    url = row.url or (
        f"urn:librarian:row:{quote(source.name, safe='')}:{quote(key, safe='')}"
        if key
        else source.urn
    )
    section_path = list(row.section_path)
    title = row.title or title_of(row.section_path)
    item: dict[str, Any] = {
        "schema_version": "0.2.0",
        "chunk_id": f"plain:{_short(source.name)}:{key}" if key else None,
        "artifact_id": source.artifact_id,
        "filtered_at": source.modified.isoformat(),
        "status": "accepted",
        "source": {"type": "url", "url": source.urn, "committed_at": source.modified.isoformat()},
        "locator": {"kind": "url", "id": where, "url": url, "title": title},
        "content": {k: v for k, v in (("text", row.text), ("title_hint", title)) if v is not None},
        "section_path": section_path or None,
    }
    return {k: v for k, v in item.items() if v is not None}


def _short(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:12]
