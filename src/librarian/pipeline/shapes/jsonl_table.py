"""A requirements table as JSONL: one object a line with `id` and `text` (optionally
`title`, `url`, `section_path`), told from the knowledge queue's JSONL by its first row."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from librarian.pipeline.shapes.csv_table import TABLE_KEYS
from librarian.pipeline.shapes.rows import (
    PlainInputError,
    PlainRow,
    PlainShape,
    Unreadable,
    section_path_of,
)

_BOM = b"\xef\xbb\xbf"
# Keys of the queue's shapes: a row holding any is the queue's, not a table's.
QUEUE_SHAPE_KEYS = frozenset({"llm_label", "source_type", "content", "locator", "chunk_id"})


def is_table_row(row: dict[str, Any]) -> bool:
    keys = set(row)
    return keys >= TABLE_KEYS and not keys & QUEUE_SHAPE_KEYS


def claims(path: Path) -> bool:
    """A JSONL file whose first row is the table shape."""
    try:
        with path.open("rb") as handle:
            for raw in handle:
                if raw.strip():
                    first = json.loads(raw.decode("utf-8-sig"))
                    return isinstance(first, dict) and is_table_row(first)
    except (OSError, ValueError, RecursionError):
        return False
    return False


def read(path: Path) -> Iterator[PlainRow | Unreadable]:
    """A row a line; a line that is not a JSON object is left for ingest to reject on its
    line as it would any bad line. Read from the file a line at a time (no copy of the
    whole text, then another of its lines), lines split at line feeds alone, as the
    queue's JSONL is read: a JSON string may hold a raw U+2028, where `splitlines` cut a
    row in two."""
    for number, line in _lines(path):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            row = None
        if not isinstance(row, dict):
            yield Unreadable(number, line)
            continue
        yield _row(number, line, row)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """Each line of the file with its number, without its line end (a BOM before the
    first dropped); PlainInputError at the first byte that is not UTF-8."""
    offset = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            data = raw.removeprefix(_BOM) if number == 1 else raw
            try:
                line = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                at = offset + len(raw) - len(data) + exc.start
                raise PlainInputError(f"{path} is not UTF-8 (byte {at})") from exc
            offset += len(raw)
            yield number, line.rstrip("\r\n")


def _row(number: int, line: str, row: dict[str, Any]) -> PlainRow | Unreadable:
    text, title, url = row.get("text"), row.get("title"), row.get("url")
    for name, value in (("text", text), ("title", title), ("url", url)):
        if value is not None and not isinstance(value, str):
            return Unreadable(number, line, f"{name} is {type(value).__name__}, not text")
    return PlainRow(
        line=number,
        id=None if row.get("id") is None else str(row["id"]).strip() or None,  # 0 is an id
        text=text,
        title=title or None,
        url=url or None,
        section_path=section_path_of(row.get("section_path")),
    )


SHAPE = PlainShape("a JSONL table (.jsonl with id and text)", (".jsonl", ".ndjson"), read, claims)
