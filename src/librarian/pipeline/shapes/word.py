"""A Word document (.docx), read with python-docx: its paragraphs, list items (Word's own
list numbers counted, `word_lists.py`) and tables, in order, as blocks for the segmenter
(`segment.py`), which makes the items; headings (Word's heading styles) make section
paths. A table with `id` and `text` columns is read like a CSV, a row an item. Text in
content controls, tracked insertions, nested tables and text boxes is read, a text box
once.

Refused in one line, before python-docx reads anything: a password-protected file (an
encrypted Word file is an OLE container, not a zip), a damaged one, one that carries
macros (a `vbaProject.bin` part, as a .docm does), one whose XML declares a DTD anywhere
in any part (entity expansion; Word never writes one), and one whose parts inflate past
MAX_PART_BYTES each or MAX_PACKAGE_BYTES together (a zip bomb): sizes checked as declared
and as actually inflated, streamed a chunk at a time, so memory is bounded by the limits
and never by the input.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from librarian.pipeline.shapes.csv_table import TABLE_KEYS, table_row
from librarian.pipeline.shapes.rows import (
    PlainInputError,
    PlainRow,
    PlainShape,
    Split,
    Unreadable,
    heading_title,
)
from librarian.pipeline.shapes.segment import Block, Segmenter
from librarian.pipeline.shapes.word_lists import Numbering, numbered_id

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# Inflated size limits of a package's parts (docs/reliability.md): a 100,000-paragraph
# document's main part is ~30 MB.
MAX_PART_BYTES = 128 * 1024 * 1024
MAX_PACKAGE_BYTES = 512 * 1024 * 1024
INFLATE_CHUNK = 1024 * 1024
DOCTYPE = b"<!DOCTYPE"


W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
# Containers whose children are the document's own blocks: a content control, a tracked
# insertion, custom XML and smart tags wrap paragraphs and tables, and their text counts.
BLOCK_WRAPPERS = {f"{W}sdt", f"{W}sdtContent", f"{W}ins", f"{W}customXml", f"{W}smartTag"}


def read(path: Path) -> Iterator[PlainRow | Unreadable | Split]:
    document = _open(path)
    walker = _Walker(_style_names(document), Numbering.of(document), _outline_levels(document))
    for kind, block in _blocks(document.element.body):
        yield from (walker.table(block) if kind == "table" else walker.paragraph(block))
    yield from walker.segmenter.end()
    if not walker.read_any:
        raise PlainInputError(f"{path} has no text: nothing to link (is it an empty document?)")
    yield walker.segmenter.split


def _blocks(parent: Any) -> Iterator[tuple[str, Any]]:
    """The body's paragraphs and tables in order, those inside content controls and
    tracked insertions included (python-docx's own walk skips them)."""
    for child in parent.iterchildren():
        if child.tag == f"{W}p":
            yield "paragraph", child
        elif child.tag == f"{W}tbl":
            yield "table", child
        elif child.tag in BLOCK_WRAPPERS:
            yield from _blocks(child)


def paragraph_text(p: Any) -> str:
    """A paragraph's text as Word shows it: every run's text, inserted ones and those in
    content controls, hyperlinks and text boxes included; deleted text (`w:delText`) left
    out, and a text box's copy for older readers (its VML fallback) read once, not twice."""
    fallbacks = list(p.iter(f"{MC}Fallback"))
    parts: list[str] = []
    for node in p.iter(f"{W}t", f"{W}tab", f"{W}br", f"{W}cr", f"{W}p"):
        if fallbacks and any(a.tag == f"{MC}Fallback" for a in node.iterancestors()):
            continue
        parts.append(node.text or "" if node.tag == f"{W}t" else " ")  # a text box's own
        # paragraph (w:p inside this one) is set off like a tab or a break
    return " ".join("".join(parts).split())


def table_rows(tbl: Any) -> list[list[str]]:
    """A table's rows of cell texts; a nested table's rows read into its cell's text."""
    rows = []
    for tr in tbl.iter(f"{W}tr"):
        if _owner(tr) is not tbl:
            continue  # a nested table's row: read with its cell
        rows.append([_cell_text(tc) for tc in tr.iter(f"{W}tc") if _owner(tc) is tbl])
    return rows


def _cell_text(tc: Any) -> str:
    parts = []
    for kind, block in _blocks(tc):
        if kind == "paragraph":
            parts.append(paragraph_text(block))
        else:
            parts.extend(" | ".join(c for c in row if c) for row in table_rows(block))
    return " ".join(p for p in parts if p)


def _owner(node: Any) -> Any:
    """The table a row or cell belongs to."""
    parent = node.getparent()
    while parent is not None and parent.tag != f"{W}tbl":
        parent = parent.getparent()
    return parent


def _style_names(document: Any) -> dict[str, str]:
    """Style id -> name, read once (python-docx looks a paragraph's style up each time)."""
    return {style.style_id: style.name or "" for style in document.styles}


def _outline_levels(document: Any) -> dict[str, int]:
    """Style id -> the heading level its paragraphs have (from 1): a heading style
    ("Heading 2"), or any style with an outline level of its own or from the style it is
    based on (a house's "Policy Chapter" built on Heading 1, a heading style with a
    translated name)."""
    own: dict[str, int | None] = {}
    based: dict[str, str | None] = {}
    for style in document.styles:
        element = style.element
        level = element.find(f"{W}pPr/{W}outlineLvl")
        value = level.get(f"{W}val") if level is not None else None
        name = (style.name or "").split()
        if value is not None and value.isdigit() and int(value) < BODY_LEVEL:
            own[style.style_id] = int(value) + 1
        elif name[:1] == ["Heading"] and name[-1].isdigit():
            own[style.style_id] = int(name[-1])
        parent = element.find(f"{W}basedOn")
        based[style.style_id] = parent.get(f"{W}val") if parent is not None else None
    levels: dict[str, int] = {}
    for style_id in based:
        seen: set[str] = set()
        at: str | None = style_id
        while at is not None and at not in seen and own.get(at) is None:
            seen.add(at)
            at = based.get(at)
        if at is not None and own.get(at) is not None:
            levels[style_id] = own[at] or 1
    return levels


BODY_LEVEL = 9  # Word's outline level of body text


def _open(path: Path) -> Any:
    """The python-docx Document, or the one-line refusal of a file it must not read."""
    with path.open("rb") as handle:
        head = handle.read(8)
    if head == OLE_MAGIC:
        raise PlainInputError(
            f"{path} is password-protected (or an old binary .doc): save a copy as a .docx "
            "without a password"
        )
    try:
        with zipfile.ZipFile(path) as package:
            names = package.namelist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise PlainInputError(f"{path} is damaged: not a Word .docx package ({exc})") from exc
    _check_parts(path)
    if any(name.lower().endswith("vbaproject.bin") for name in names):
        raise PlainInputError(
            f"{path} carries macros: save it as a plain .docx (Word: File > Save As > Word "
            "Document), which drops them"
        )
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        return docx.Document(str(path))
    except (PackageNotFoundError, KeyError, ValueError) as exc:
        raise PlainInputError(f"{path} is damaged: python-docx cannot read it ({exc})") from exc
    except SyntaxError as exc:  # lxml's XMLSyntaxError: cut short, or entities it refuses
        raise PlainInputError(f"{path} is damaged: its XML does not parse ({exc.msg})") from exc


def _check_parts(path: Path) -> None:
    """Refuses a package whose XML declares a DTD anywhere, or whose parts inflate past
    the limits: each XML part streamed a chunk at a time, its declared and its actual
    inflated size counted (a zip entry may lie about its size)."""
    total = 0
    with zipfile.ZipFile(path) as package:
        infos = package.infolist()
        declared = sum(info.file_size for info in infos)
        if declared > MAX_PACKAGE_BYTES or any(i.file_size > MAX_PART_BYTES for i in infos):
            raise _too_big(path, max(declared, *(i.file_size for i in infos)))
        for info in infos:
            if not info.filename.lower().endswith((".xml", ".rels")):
                total += info.file_size
                continue
            total += _scan_part(path, package, info.filename, total)


def _scan_part(path: Path, package: zipfile.ZipFile, name: str, before: int) -> int:
    """The part's inflated size, read a chunk at a time; a DTD or a size past the limits
    refused on the way."""
    size, tail = 0, b""
    try:
        with package.open(name) as part:
            while chunk := part.read(INFLATE_CHUNK):
                size += len(chunk)
                if size > MAX_PART_BYTES or before + size > MAX_PACKAGE_BYTES:
                    raise _too_big(path, before + size)
                if DOCTYPE in (tail + chunk).upper():
                    raise PlainInputError(
                        f"{path} is damaged: its part {name} declares a DTD (entities), which "
                        "no Word document does; save a copy from Word"
                    )
                tail = chunk[-len(DOCTYPE) :]
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise PlainInputError(
            f"{path} is damaged: its part {name} does not inflate ({exc})"
        ) from exc
    return size


def _too_big(path: Path, size: int) -> PlainInputError:
    return PlainInputError(
        f"{path} inflates past what a Word document holds ({size / 2**20:.0f} MiB or more; "
        f"the limits are {MAX_PART_BYTES // 2**20} MiB a part and "
        f"{MAX_PACKAGE_BYTES // 2**20} MiB in all): a zip bomb, or not a document"
    )


@dataclass
class _Walker:
    styles: dict[str, str]  # style id -> name
    lists: Numbering  # Word's list numbering, counted as the paragraphs are read
    headings: dict[str, int]  # style id -> heading level
    segmenter: Segmenter = field(default_factory=Segmenter)
    read_any: bool = False  # any paragraph or table row with text
    paragraphs: int = 0
    tables: int = 0

    def paragraph(self, p: Any) -> Iterator[PlainRow]:
        self.paragraphs += 1
        text = paragraph_text(p)
        if not text:
            return
        self.read_any = True
        style_ref = p.find(f"{W}pPr/{W}pStyle")
        style_id = style_ref.get(f"{W}val") if style_ref is not None else ""
        style = self.styles.get(style_id, "")
        if style == "Title":
            return
        where = f"paragraph {self.paragraphs}"
        if (level := self._heading_level(p, style_id)) is not None:
            yield from self.segmenter.feed(Block("heading", heading_title(text), where, level))
            return
        yield from self.segmenter.feed(self._listed(p, style, text, where))

    def _heading_level(self, p: Any, style_id: str) -> int | None:
        """The paragraph's heading level: its own outline level, else its style's."""
        own = p.find(f"{W}pPr/{W}outlineLvl")
        value = own.get(f"{W}val") if own is not None else None
        if value is not None and value.isdigit():
            return int(value) + 1 if int(value) < BODY_LEVEL else None
        return self.headings.get(style_id)

    def _listed(self, p: Any, style: str, text: str, where: str) -> Block:
        """The paragraph as a block: a list item (Word's number put before a text it
        identifies, "1.2 Users must …", as the PDF Word saves shows it), or not."""
        if style.startswith("List Number"):
            return Block("numbered", text, where)
        if style.startswith("List Bullet"):
            return Block("bullet", text, where)
        numbered = p.find(f"{W}pPr/{W}numPr")
        num = numbered.find(f"{W}numId") if numbered is not None else None
        if num is None or num.get(f"{W}val") in (None, "0"):  # "0": numbering off
            return Block("paragraph", text, where)
        level = numbered.find(f"{W}ilvl")
        bullet, label = self.lists.label(
            num.get(f"{W}val"), level.get(f"{W}val") if level is not None else "0"
        )
        if bullet:
            return Block("bullet", text, where)
        found = numbered_id(label)
        return (
            Block("paragraph", f"{found} {text}", where)
            if found
            else Block("numbered", text, where)
        )

    def table(self, tbl: Any) -> Iterator[PlainRow | Unreadable]:
        self.tables += 1
        rows = table_rows(tbl)
        self.read_any = self.read_any or any(any(row) for row in rows)
        header = [h.lower() for h in rows[0]] if rows else []
        where = f"table {self.tables}"
        if not set(header) >= TABLE_KEYS:
            table = tuple(tuple(row) for row in rows)
            yield from self.segmenter.feed(Block("table", "", where, cells=table))
            return
        for number, row in enumerate(rows[1:], start=2):
            if any(row):
                named = dict(zip(header, row, strict=False))
                yield from self.segmenter.row(table_row(0, named, f"{where}, row {number}"))


SHAPE = PlainShape("a Word document (.docx)", (".docx", ".docm"), read, binary=True)
