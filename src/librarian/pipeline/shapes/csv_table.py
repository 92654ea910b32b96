"""A requirements table as CSV: `id` and `text` columns, optionally `title`, `url`,
`section_path`; header names in any case."""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator
from pathlib import Path

from librarian.pipeline.shapes.rows import (
    PlainInputError,
    PlainRow,
    PlainShape,
    Unreadable,
    section_path_of,
    text_of,
)

TABLE_KEYS = frozenset({"id", "text"})


class _Lines:
    """A text's lines as the csv reader takes them (split at line feeds alone, as it
    counts them), the lines of the record being read kept: its raw text, should it be
    refused. Nothing else is copied (the lines of the whole file were, beside its text,
    and split at U+2028 and form feeds too, so a refused row showed the wrong lines)."""

    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0
        self.taken: list[str] = []

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        if self.at >= len(self.text):
            raise StopIteration
        end = self.text.find("\n", self.at)
        end = len(self.text) if end < 0 else end + 1
        line, self.at = self.text[self.at : end], end
        self.taken.append(line)
        return line

    def record(self) -> str:
        """The lines taken since the last record, as one text; then forgotten."""
        raw, self.taken = "".join(self.taken), []
        return raw.removesuffix("\n")


def read(path: Path) -> Iterator[PlainRow | Unreadable]:
    """A row for every data row, at the line it starts on. A row with more or fewer cells
    than the header is kept as its raw text, with why: DictReader would have kept the
    first cells and dropped the rest without a word."""
    text = text_of(path)
    limit = csv.field_size_limit(sys.maxsize)
    lines = _Lines(text)
    try:
        # strict: a quote left open swallows every later row otherwise.
        reader = csv.reader(lines, strict=True)
        header = [h.strip().lower() for h in next(reader, [])]
        check_header(path, header, lines.record().split("\n", 1)[0])
        rows: list[PlainRow | Unreadable] = []
        start = reader.line_num + 1
        try:
            for cells in reader:
                raw = lines.record()
                if any(c.strip() for c in cells):
                    rows.append(_row(start, header, cells, raw))
                start = reader.line_num + 1
        except csv.Error as exc:
            raise PlainInputError(
                f"{path}: line {start}: {_problem(exc)}; no row of the file was read"
            ) from exc
    finally:
        csv.field_size_limit(limit)
    return iter(rows)


def check_header(path: Path, header: list[str], first: str) -> None:
    missing = TABLE_KEYS - set(header)
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


def table_row(line: int, cells: dict[str, str], where: str | None = None) -> PlainRow:
    """A row of a table (CSV, or a Word table read like one) by its column names."""
    row_id = (cells.get("id") or "").strip() or None
    return PlainRow(
        line=line,
        id=row_id,
        text=cells.get("text"),
        title=(cells.get("title") or "").strip() or None,
        url=(cells.get("url") or "").strip() or None,
        section_path=section_path_of(cells.get("section_path")),
        where=where,
    )


def _row(start: int, header: list[str], cells: list[str], raw: str) -> PlainRow | Unreadable:
    if len(cells) == len(header):
        return table_row(start, dict(zip(header, cells, strict=True)))
    why = (
        f"the row has {len(cells)} cells, the header {len(header)}: an unquoted comma in a "
        'cell? put the cell in double quotes ("…, …")'
    )
    return Unreadable(start, raw, why)


def _problem(exc: csv.Error) -> str:
    if "unexpected end of data" in str(exc) or "EOF" in str(exc):
        return "a double quote opened here is never closed (the rest of the file would be one cell)"
    return f"not a CSV row ({exc})"


SHAPE = PlainShape("a CSV table (.csv)", (".csv",), read)
