"""Plain inputs: a team's own requirements as a simple table (CSV, or JSONL with `id`,
`text`, optional `title`, `url`, `section_path`) or as a Markdown document split by
heading. Each row becomes a KnowledgeItem line, so it goes through the same validation,
accounting and envelopes as the queue shapes.

Provenance is synthetic but stable: the source is the document (`--source NAME`, else
the file's name) at the file's modification time; a row is `<source>#<id>`; the artifact
is the source, so a row whose text changes under the same id is an update. The envelope
says which file and which hash (`knowledge.source.url`: `urn:librarian:plain:<sha256>`);
a row without a URL of its own is located as `urn:librarian:row:<source>:<id>`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from librarian.errors import InputError

PLAIN_SUFFIXES = (".csv", ".md", ".markdown")
SIMPLE_KEYS = frozenset({"id", "text"})
QUEUE_SHAPE_KEYS = frozenset({"llm_label", "source_type", "content", "locator", "chunk_id"})
# A Markdown block longer than this is split at paragraph ends (requirement-sized).
BLOCK_CHARS = 1500


class PlainInputError(InputError):
    """A plain input cannot be read as a table or document at all (not a row: the file)."""


@dataclass(frozen=True)
class PlainSource:
    name: str  # what the envelopes call the document
    sha256: str  # of the file's bytes
    modified: datetime

    @classmethod
    def of(cls, path: Path, name: str | None) -> PlainSource:
        data = path.read_bytes()
        modified = datetime.fromtimestamp(path.stat().st_mtime, UTC).replace(microsecond=0)
        return cls(name or path.name, hashlib.sha256(data).hexdigest(), modified)

    @property
    def urn(self) -> str:
        return f"urn:librarian:plain:{self.sha256}"


def is_plain(path: Path) -> bool:
    """A CSV or Markdown file, or JSONL whose first row is the simple table shape."""
    if path.suffix.lower() in PLAIN_SUFFIXES:
        return True
    try:
        with path.open("rb") as handle:
            for raw in handle:
                if raw.strip():
                    first = json.loads(raw.decode("utf-8-sig"))
                    return isinstance(first, dict) and _simple(first)
    except (OSError, ValueError, RecursionError):
        return False
    return False


def _simple(row: dict[str, Any]) -> bool:
    keys = set(row)
    return keys >= SIMPLE_KEYS and not keys & QUEUE_SHAPE_KEYS


def plain_lines(path: Path, source_name: str | None = None) -> list[tuple[int, bytes]]:
    """(row number, KnowledgeItem JSON) for every row or block of a plain input."""
    source = PlainSource.of(path, source_name)
    suffix = path.suffix.lower()
    text = _text(path)
    rows: Iterator[tuple[int, Any]]
    if suffix == ".csv":
        rows = _csv_rows(path, text)
    elif suffix in (".md", ".markdown"):
        rows = enumerate(markdown_blocks(text), start=1)
    else:
        rows = _jsonl_rows(text)
    return [
        (
            n,
            row.encode("utf-8", "surrogateescape")
            if isinstance(row, str)
            else json.dumps(knowledge_item(row, source)).encode(),
        )
        for n, row in rows
    ]


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PlainInputError(f"{path} is not UTF-8 (byte {exc.start})") from exc


def _csv_rows(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    limit = csv.field_size_limit(sys.maxsize)
    try:
        reader = csv.DictReader(io.StringIO(text))
        missing = SIMPLE_KEYS - set(reader.fieldnames or ())
        if missing:
            raise PlainInputError(
                f"{path}: a requirements table needs the columns id and text "
                f"(missing: {', '.join(sorted(missing))}; optional: title, url, section_path)"
            )
        rows = list(reader)
    except csv.Error as exc:
        raise PlainInputError(f"{path}: not a CSV table: {exc}") from exc
    finally:
        csv.field_size_limit(limit)
    return enumerate(rows, start=1)


def _jsonl_rows(text: str) -> Iterator[tuple[int, Any]]:
    """(line number, row); a line that is not a JSON object stays the raw line, for
    ingest to reject on its line as it would any bad line."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            row = None
        yield number, row if isinstance(row, dict) else line


def knowledge_item(row: dict[str, Any], source: PlainSource) -> dict[str, Any]:
    """A KnowledgeItem for one plain row; what a row lacks is left for validation to name."""
    row_id = str(row.get("id") or "").strip()
    where = f"{source.name}#{row_id}" if row_id else None
    # The row's own URL, else one naming the document and the row: stable when the file
    # changes, so a row edited under the same id is an update of itself.
    url = row.get("url") or (
        f"urn:librarian:row:{quote(source.name, safe='')}:{quote(row_id, safe='')}"
        if row_id
        else source.urn
    )
    section_path = _section_path(row.get("section_path"))
    title = row.get("title") or (section_path[-1] if section_path else None)
    item: dict[str, Any] = {
        "schema_version": "0.2.0",
        "chunk_id": f"plain:{_short(source.name)}:{row_id}" if row_id else None,
        "artifact_id": f"plain:{source.name}",
        "filtered_at": source.modified.isoformat(),
        "status": "accepted",
        "source": {"type": "url", "url": source.urn, "committed_at": source.modified.isoformat()},
        "locator": {"kind": "url", "id": where, "url": url, "title": title},
        "content": {
            k: v for k, v in (("text", row.get("text")), ("title_hint", title)) if v is not None
        },
        "section_path": section_path or None,
    }
    return {k: v for k, v in item.items() if v is not None}


def _section_path(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    if isinstance(value, str) and value.strip():
        return [part.strip() for part in re.split(r"\s*(?:>|\u203a|/)\s*", value) if part.strip()]
    return []


def _short(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:12]


_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def markdown_blocks(text: str) -> Iterator[dict[str, Any]]:
    """Sections of a Markdown document by heading; each with text becomes one or more
    requirement-sized blocks (split at paragraph ends past BLOCK_CHARS). Ids are the
    heading path as a slug, numbered within a heading."""
    path: list[str] = []
    body: list[str] = []
    fenced = False

    def flush() -> Iterator[dict[str, Any]]:
        for i, block in enumerate(_blocks("\n".join(body)), start=1):
            slug = "/".join(_slug(h) for h in path) or "preamble"
            yield {
                "id": f"{slug}-{i}",
                "text": block,
                "section_path": list(path),
                "title": path[-1] if path else None,
            }

    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line)
        if heading is None:
            body.append(line)
            continue
        yield from flush()
        body = []
        level = len(heading.group(1))
        path = [*path[: level - 1], heading.group(2).strip()]
    yield from flush()


def _blocks(text: str) -> Iterator[str]:
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    current: list[str] = []
    for paragraph in paragraphs:
        if current and sum(len(p) for p in current) + len(paragraph) > BLOCK_CHARS:
            yield "\n\n".join(current)
            current = []
        current.append(paragraph)
    if current:
        yield "\n\n".join(current)


def _slug(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")[:60] or "section"
