"""A requirements register kept as an Excel workbook (.xlsx): each sheet a table, a row a
requirement. A sheet with `id` and `text` columns (any case; `title`, `url`,
`section_path` too) is read as a CSV is; any other by what its columns hold
(`table_reading`: a column of ids, a column of requirement sentences, as a register's
"Control" and "Requirement"), its rows named by the sheet and their number where no
column gives ids; a sheet that holds neither is left, and the run says so.

The package is checked as every Office file is (`ooxml`: no password, macros, zip bomb
or DTD) before openpyxl reads it, read-only, a row at a time, MAX_COLUMNS wide; a
formula's cell is read as its last computed value (what Excel shows)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

from librarian.pipeline.shapes import rows
from librarian.pipeline.shapes.csv_table import TABLE_KEYS, table_row
from librarian.pipeline.shapes.ooxml import MAGIC, Package, checked_package
from librarian.pipeline.shapes.slugs import slug_of
from librarian.pipeline.shapes.table_reading import table_columns

XLSX = Package("Excel workbook", ".xlsx", "Excel: File > Save As > Excel Workbook")
MAX_COLUMNS = 64  # a register's columns; cells past them are not read


def read(path: Path) -> Iterator[rows.PlainRow | rows.Unreadable | rows.Split]:
    checked_package(path, XLSX)
    import openpyxl

    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # what openpyxl raises on a package it cannot read
        raise rows.PlainInputError(f"{path} is damaged: not an Excel workbook ({exc})") from exc
    split, line = rows.Split(), 0
    try:
        for sheet in book.worksheets:
            grid = _grid(sheet)
            for row in _sheet_rows(str(sheet.title), grid, split):
                line += 1
                yield replace(row, line=line)
    finally:
        book.close()
    if not line:
        raise rows.PlainInputError(
            f"{path}: no sheet holds a column of requirements (name its columns id and "
            "text, or give a column of requirement ids or sentences)"
        )
    yield split


def _grid(sheet: Any) -> list[tuple[int, list[str]]]:
    """The sheet's non-empty rows as text, each with its number, at most MAX_ITEMS + 1
    of them (one more is enough for the shape to refuse the file)."""
    grid = []
    for n, values in enumerate(sheet.iter_rows(max_col=MAX_COLUMNS, values_only=True), 1):
        cells = [_text(v) for v in values]
        if any(cells):
            grid.append((n, cells))
            if len(grid) > rows.MAX_ITEMS + 1:
                break
    return grid


def _sheet_rows(
    name: str, grid: list[tuple[int, list[str]]], split: rows.Split
) -> Iterator[rows.PlainRow]:
    if not grid:
        return
    header = [h.strip().lower() for h in grid[0][1]]
    path = (name,)
    if set(header) >= TABLE_KEYS:
        split.tables.append(f"sheet '{name}': a row per requirement, its id and text columns")
        for n, cells in grid[1:]:
            split.blocks += 1
            split.by_table += 1
            row = table_row(0, dict(zip(header, cells, strict=False)), _where(name, n))
            yield row if row.section_path else replace(row, section_path=path, title=name)
        return
    reading = table_columns([cells for _, cells in grid])
    if reading is None:
        split.warnings.append(
            f"warning: sheet '{name}' has no column of requirement ids or requirement "
            "sentences: not read"
        )
        return
    split.tables.append(f"sheet '{name}': a row per requirement, {reading.said}")
    for n, cells in grid[reading.first :]:
        text = _at(cells, reading.text)
        row_id = _at(cells, reading.ids) if reading.ids is not None else ""
        if text or row_id:
            split.blocks += 1
            split.by_table += 1
            row_id = row_id.rstrip(".:)") or f"{slug_of(name)}-{n}"
            yield rows.PlainRow(0, row_id, text, name, None, path, _where(name, n))


def _at(cells: Sequence[str], column: int) -> str:
    return cells[column].strip() if column < len(cells) else ""


def _where(sheet: str, row: int) -> str:
    return f"sheet '{sheet}', row {row}"


def _text(value: object) -> str:
    """A cell as Excel shows it, near enough: a whole number without its ".0"."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime | date):
        return value.isoformat()
    return " ".join(str(value).split())


SHAPE = rows.PlainShape("an Excel workbook (.xlsx)", (".xlsx",), read, binary=True, magic=MAGIC)
