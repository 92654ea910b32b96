"""Plain inputs: a team's own requirements as a simple table (CSV, or JSONL with `id`,
`text`, optional `title`, `url`, `section_path`), a Markdown, Word or PDF document split
by heading. Each shape (`pipeline/shapes/`) yields typed rows; each row becomes a
KnowledgeItem line here, so it goes through the same validation, accounting and
envelopes as the queue shapes, and a rejected row keeps that line as its raw input.

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
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from librarian.pipeline.shapes import plain_shape
from librarian.pipeline.shapes.rows import (
    PlainInputError,
    PlainRow,
    PlainShape,
    Split,
    Unreadable,
    title_of,
)
from librarian.schemas.records import plain_locator_id

__all__ = ["PlainInputError", "PlainRows", "PlainSource", "is_plain", "plain_lines"]


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
        return f"plain:{self.name}"

    @property
    def urn(self) -> str:
        return f"urn:librarian:plain:{self.sha256}"


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
    """A plain input as KnowledgeItem lines: (line, JSON) in order, and the lines the
    file holds that are no row (a CSV row with more or fewer cells than its header):
    line -> why, rejected with that reason."""

    lines: list[tuple[int, bytes]]
    unreadable: dict[int, str]
    not_requirements: dict[int, str] = field(default_factory=dict)  # notes, preamble: why
    split: Split | None = None  # how a document shape split it (None: a table shape)
    artifact_id: str = ""  # the document's, in every row
    chunk_ids: frozenset[str] = frozenset()  # every row's: what this version holds


def plain_lines(
    path: Path, source_name: str | None = None, shape: PlainShape | None = None
) -> PlainRows:
    """(line number, KnowledgeItem JSON) for every row or block of a plain input. `shape`:
    the one its source found (None: found here)."""
    shape = shape or plain_shape(path)
    if shape is None:
        raise PlainInputError(f"{path}: no plain shape reads this file")
    source = PlainSource.of(path, source_name)
    lines: list[tuple[int, bytes]] = []
    unreadable: dict[int, str] = {}
    notes: dict[int, str] = {}
    chunks: set[str] = set()
    split = None
    for row in shape.read(path):
        if isinstance(row, Split):
            split = row
            continue
        if isinstance(row, Unreadable):
            lines.append((row.line, row.raw.encode("utf-8", "surrogateescape")))
            if row.why is not None:
                unreadable[row.line] = row.why
            continue
        item = knowledge_item(row, source)
        lines.append((row.line, json.dumps(item).encode()))
        chunks.add(item.get("chunk_id", ""))
        if row.note is not None:
            notes[row.line] = row.note
    return PlainRows(lines, unreadable, notes, split, source.artifact_id, frozenset(chunks - {""}))


def knowledge_item(row: PlainRow, source: PlainSource) -> dict[str, Any]:
    """A KnowledgeItem for one plain row; what a row lacks is left for validation to name."""
    row_id = row.id or ""
    where = plain_locator_id(source.name, row_id, row.where) if row_id else None
    # The row's own URL, else one naming the document and the row: stable when the file
    # changes, so a row edited under the same id is an update of itself.
    url = row.url or (
        f"urn:librarian:row:{quote(source.name, safe='')}:{quote(row_id, safe='')}"
        if row_id
        else source.urn
    )
    section_path = list(row.section_path)
    title = row.title or title_of(row.section_path)
    item: dict[str, Any] = {
        "schema_version": "0.2.0",
        "chunk_id": f"plain:{_short(source.name)}:{row_id}" if row_id else None,
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
