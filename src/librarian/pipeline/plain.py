"""Plain inputs: a team's own requirements as a simple table (CSV, or JSONL with `id`,
`text`, optional `title`, `url`, `section_path`) or as a Markdown document split by
heading. Each row becomes a KnowledgeItem line, so it goes through the same validation,
accounting and envelopes as the queue shapes.

Provenance is synthetic but stable: the source is the document (`--source NAME`, else
the file's name with its directory's, `a/reqs.csv`) at the file's modification time; a
row is `<source>#<id>`; the artifact is the source, so a row whose text changes under the
same id is an update. The envelope says which file and which hash
(`knowledge.source.url`: `urn:librarian:plain:<sha256>`); a row without a URL of its own
is located as `urn:librarian:row:<source>:<id>`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import sys
import unicodedata
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
        return cls(name or default_name(path), hashlib.sha256(data).hexdigest(), modified)

    @property
    def urn(self) -> str:
        return f"urn:librarian:plain:{self.sha256}"


def default_name(path: Path) -> str:
    """The document a file is, without --source: its name and its directory's, so that
    `a/reqs.csv` and `b/reqs.csv` are two documents (their rows' ids would collide)."""
    folder = path.resolve().parent.name
    return f"{folder}/{path.name}" if folder else path.name


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


@dataclass
class PlainRows:
    """A plain input as KnowledgeItem lines: (line, JSON) in order, and the lines the
    file holds that are no row (a CSV row with more or fewer cells than its header):
    line -> why, rejected with that reason."""

    lines: list[tuple[int, bytes]]
    unreadable: dict[int, str]


def plain_lines(path: Path, source_name: str | None = None) -> PlainRows:
    """(line number, KnowledgeItem JSON) for every row or block of a plain input."""
    source = PlainSource.of(path, source_name)
    suffix = path.suffix.lower()
    text = _text(path)
    rows: Iterator[tuple[int, Any]]
    unreadable: dict[int, str] = {}
    if suffix == ".csv":
        rows = _csv_rows(path, text, unreadable)
    elif suffix in (".md", ".markdown"):
        rows = enumerate(markdown_blocks(text), start=1)
    else:
        rows = _jsonl_rows(text)
    lines = [
        (
            n,
            row.encode("utf-8", "surrogateescape")
            if isinstance(row, str)
            else json.dumps(knowledge_item(row, source)).encode(),
        )
        for n, row in rows
    ]
    return PlainRows(lines, unreadable)


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PlainInputError(f"{path} is not UTF-8 (byte {exc.start})") from exc


def _csv_rows(path: Path, text: str, unreadable: dict[int, str]) -> Iterator[tuple[int, Any]]:
    """(line where the row starts, row) for every data row. A row with more or fewer cells
    than the header is kept as its raw text, with why in `unreadable`: DictReader would
    have kept the first cells and dropped the rest without a word."""
    limit = csv.field_size_limit(sys.maxsize)
    lines = text.splitlines()
    try:
        # strict: a quote left open swallows every later row otherwise.
        reader = csv.reader(io.StringIO(text), strict=True)
        header = [h.strip().lower() for h in next(reader, [])]
        _check_header(path, header, lines[0] if lines else "")
        rows: list[tuple[int, Any]] = []
        start = reader.line_num + 1
        try:
            for cells in reader:
                if any(c.strip() for c in cells):
                    rows.append(_csv_row(start, header, cells, lines, reader.line_num, unreadable))
                start = reader.line_num + 1
        except csv.Error as exc:
            raise PlainInputError(
                f"{path}: line {start}: {_csv_problem(exc)}; no row of the file was read"
            ) from exc
    finally:
        csv.field_size_limit(limit)
    return iter(rows)


def _check_header(path: Path, header: list[str], first: str) -> None:
    missing = SIMPLE_KEYS - set(header)
    if not missing:
        return
    hint = ""
    for name, mark in (("semicolons", ";"), ("tabs", "\t")):
        if mark in first:
            hint = f"; the header is separated by {name}: save the table as comma-separated CSV"
    raise PlainInputError(
        f"{path}: a requirements table needs the columns id and text "
        f"(missing: {', '.join(sorted(missing))}; optional: title, url, section_path){hint}"
    )


def _csv_row(
    start: int,
    header: list[str],
    cells: list[str],
    lines: list[str],
    end: int,
    unreadable: dict[int, str],
) -> tuple[int, Any]:
    if len(cells) == len(header):
        return start, dict(zip(header, cells, strict=True))
    unreadable[start] = (
        f"the row has {len(cells)} cells, the header {len(header)}: an unquoted comma in a "
        'cell? put the cell in double quotes ("…, …")'
    )
    return start, "\n".join(lines[start - 1 : end])


def _csv_problem(exc: csv.Error) -> str:
    if "unexpected end of data" in str(exc) or "EOF" in str(exc):
        return "a double quote opened here is never closed (the rest of the file would be one cell)"
    return f"not a CSV row ({exc})"


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
    row_id = "" if row.get("id") is None else str(row.get("id")).strip()  # 0 is an id
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


def markdown_blocks(text: str) -> Iterator[dict[str, Any]]:
    """Sections of a Markdown document by heading (CommonMark, by markdown-it-py: fences
    of either kind, setext headings; YAML front matter is no section). Each with text
    becomes one or more requirement-sized blocks (split between top-level blocks past
    BLOCK_CHARS). Ids are the heading path as Unicode slugs, a repeated heading numbered
    (`example`, `example-1`), then the block's number within its heading."""
    lines = text.splitlines()
    path: list[tuple[int, str]] = []  # (level, heading) from the top
    body: list[str] = []
    slugs = _Slugs()
    slug = "preamble"

    def flush() -> Iterator[dict[str, Any]]:
        headings = [h for _, h in path]
        for i, block in enumerate(_blocks(body), start=1):
            yield {
                "id": f"{slug}-{i}",
                "text": block,
                "section_path": headings,
                "title": headings[-1] if headings else None,
            }

    tokens = _parser().parse(text)
    for index, token in enumerate(tokens):
        if token.level != 0 or token.map is None or token.nesting == -1:
            continue
        if token.type == "hr" or (token.type == "front_matter" and _is_metadata(token.content)):
            continue
        if token.type == "heading_open":
            yield from flush()
            body = []
            level = int(token.tag[1:])
            path = [*(p for p in path if p[0] < level), (level, tokens[index + 1].content)]
            slug = slugs.of([h for _, h in path])
            continue
        first, last = token.map
        body.append("\n".join(lines[first:last]))
    yield from flush()


def _is_metadata(front: str) -> bool:
    """Front matter is YAML keys and values; anything else between `---` lines is text
    (a document that opens with a rule), kept."""
    import yaml

    try:
        return isinstance(yaml.safe_load(front), dict)
    except yaml.YAMLError:
        return False


def _parser() -> Any:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    return MarkdownIt("commonmark").use(front_matter_plugin)


class _Slugs:
    """Slugs of heading paths, unique within a document: a repeat is numbered."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def of(self, headings: list[str]) -> str:
        slug = "/".join(_slug(h) for h in headings) or "preamble"
        count = self.seen.get(slug, 0)
        self.seen[slug] = count + 1
        return slug if count == 0 else f"{slug}-{count}"


def _blocks(body: list[str]) -> Iterator[str]:
    current: list[str] = []
    for block in (b.strip() for b in body):
        if not block:
            continue
        if current and sum(len(p) for p in current) + len(block) > BLOCK_CHARS:
            yield "\n\n".join(current)
            current = []
        current.append(block)
    if current:
        yield "\n\n".join(current)


def _slug(heading: str) -> str:
    """Lower-case words of any script joined by '-' (`## Безопасность` is not `section`)."""
    words = re.findall(r"\w+", unicodedata.normalize("NFKC", heading).lower())
    return "-".join(words)[:60].strip("-") or "section"
