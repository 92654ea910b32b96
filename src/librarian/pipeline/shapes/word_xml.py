"""A Word package's XML as text: a container's blocks in order (those in content controls
and tracked insertions too), a paragraph's text as Word shows it (its text boxes taken out
to be read as paragraphs of their own), and a table's grid, merged cells read in each
column and row they cover (`word.py` reads the document with these)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from librarian.pipeline.shapes.rows import requirement_id

MAX_GRID_COLUMNS = 63  # Word's widest table: a merged cell spans at most this many

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
# Containers whose children are the document's own blocks: a content control, a tracked
# insertion, custom XML and smart tags wrap paragraphs and tables (and a table's rows and
# cells), and their text counts.
BLOCK_WRAPPERS = {f"{W}sdt", f"{W}sdtContent", f"{W}ins", f"{W}customXml", f"{W}smartTag"}
# What a paragraph's text leaves out: a text box (read as paragraphs of its own), and a
# drawing's copy for older readers (its VML fallback).
_ASIDE = (f"{W}txbxContent", f"{MC}Fallback")


def blocks(parent: Any) -> Iterator[tuple[str, Any]]:
    """A container's paragraphs and tables in order, those inside content controls and
    tracked insertions included."""
    for child in parent.iterchildren():
        yield from blocks_of(child)


def blocks_of(child: Any) -> Iterator[tuple[str, Any]]:
    if child.tag == f"{W}p":
        yield "paragraph", child
    elif child.tag == f"{W}tbl":
        yield "table", child
    elif child.tag in BLOCK_WRAPPERS:
        yield from blocks(child)


def own(parent: Any, tag: str) -> Iterator[Any]:
    """A table's rows, or a row's cells: its children of `tag`, those wrapped in content
    controls or custom XML included (a nested table's never)."""
    for child in parent.iterchildren():
        if child.tag == tag:
            yield child
        elif child.tag in BLOCK_WRAPPERS:
            yield from own(child, tag)


def paragraph_text(p: Any) -> tuple[str, list[Any]]:
    """A paragraph's text as Word shows it, and its text boxes (`w:txbxContent`), taken
    out of it to be read as paragraphs of their own: every run's text, inserted ones and
    those in content controls and hyperlinks included; deleted text (`w:delText`) left
    out, and a text box's copy for older readers (its VML fallback) dropped unread."""
    boxes = []
    asides, n = list(p.iter(*_ASIDE)), 0
    while n < len(asides):  # in document order: those inside one come right after it
        aside = asides[n]
        n += sum(1 for _ in aside.iter(*_ASIDE))  # a box in a box is its paragraph's
        if aside.tag == f"{W}txbxContent":
            boxes.append(aside)
        aside.getparent().remove(aside)
    parts = [
        node.text or "" if node.tag == f"{W}t" else " "
        for node in p.iter(f"{W}t", f"{W}tab", f"{W}br", f"{W}cr")
    ]
    return " ".join("".join(parts).split()), boxes


@dataclass(frozen=True)
class _Cell:
    """A table cell as it lies in the table's grid: a merged cell lies in each column and
    row it covers, the same `merged` number in each."""

    text: str
    merged: int = 0  # 0: not merged
    continued: bool = False  # a vertical merge's later row: `text` is its first row's


def table_rows(tbl: Any) -> list[list[_Cell]]:
    """A table's rows as its grid: a cell spanning columns (`w:gridSpan`) in each, a
    vertically merged one (`w:vMerge`) in each row; a nested table's rows read into its
    cell's text."""
    rows: list[list[_Cell]] = []
    above: dict[int, _Cell] = {}  # each column's cell in the row before
    merges = 0
    for tr in own(tbl, f"{W}tr"):
        row = [_Cell("")] * _count(tr.find(f"{W}trPr/{W}gridBefore"), 0)
        wider: list[str] = []  # cells past Word's widest table: read into its last column
        for tc in own(tr, f"{W}tc"):
            if len(row) >= MAX_GRID_COLUMNS:
                wider.append(_cell_text(tc))
                continue
            span = min(_count(tc.find(f"{W}tcPr/{W}gridSpan"), 1), MAX_GRID_COLUMNS - len(row))
            vmerge = tc.find(f"{W}tcPr/{W}vMerge")
            if vmerge is not None and vmerge.get(f"{W}val") != "restart" and len(row) in above:
                first = above[len(row)]
                cell = _Cell(first.text, first.merged, continued=True)
            else:
                merges += span > 1 or vmerge is not None
                merged = merges if span > 1 or vmerge is not None else 0
                cell = _Cell(_cell_text(tc), merged)
            above.update((column, cell) for column in range(len(row), len(row) + span))
            row.extend([cell] * span)
        if wider:
            row[-1] = _Cell(" | ".join(t for t in (shown(row)[-1], *wider) if t))
        rows.append(row)
    return rows


def _count(setting: Any, default: int) -> int:
    """A grid count (`w:gridSpan`, `w:gridBefore`), held to Word's widest table."""
    value = setting.get(f"{W}val", "") if setting is not None else ""
    return min(int(value), MAX_GRID_COLUMNS) if value.isdigit() else default


def shown(row: list[_Cell]) -> list[str]:
    """A row's texts as the table shows them: a merged cell's once, in its first column
    and row."""
    return [
        ""
        if cell.continued or (cell.merged and n and row[n - 1].merged == cell.merged)
        else cell.text
        for n, cell in enumerate(row)
    ]


def _cell_text(tc: Any) -> str:
    parts = []
    for kind, block in blocks(tc):
        if kind == "paragraph":
            text, boxes = paragraph_text(block)
            parts.extend([text, *(_cell_text(box) for box in boxes)])
        else:
            parts.extend(" | ".join(c for c in shown(row) if c) for row in table_rows(block))
    return " ".join(p for p in parts if p)


def read_merged(
    grid: list[list[_Cell]], ids: int | None, text: int, first: int
) -> list[list[str] | None]:
    """The rows' texts, merged cells read where they cover the columns of ids (`ids`) and
    of text: a merged cell over the text column is its text in each row it covers; one
    over both columns is the id its text opens with, and the rest; a row whose id cell
    continues the one above continues that requirement (None: its text is added to it)."""
    rows: list[list[str] | None] = []
    before: list[str] | None = None  # the last row read as a requirement's
    for n, row in enumerate(grid):
        cells = shown(row)
        rows.append(cells)
        if n < first or text >= len(row):
            continue
        at, owner = row[text], row[ids] if ids is not None and ids < len(row) else None
        if owner is not None and owner.continued and before is not None and text < len(before):
            if not at.continued:
                before[text] = f"{before[text]} {at.text}".strip()
            rows[-1] = None
            continue
        before = cells
        cells[text] = at.text
        if owner is not None and ids is not None and owner.merged and owner.merged == at.merged:
            found = requirement_id(at.text)
            cells[ids], cells[text] = found if found is not None else ("", at.text)
    return rows
