"""A requirements table as JSONL: one object a line with `id` and `text` (optionally
`title`, `url`, `section_path`), told from the knowledge queue's JSONL by its first row."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from librarian.pipeline.shapes.csv_table import TABLE_KEYS
from librarian.pipeline.shapes.rows import (
    PlainRow,
    PlainShape,
    Unreadable,
    section_path_of,
    text_of,
)

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
    line as it would any bad line."""
    for number, line in enumerate(text_of(path).splitlines(), start=1):
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
