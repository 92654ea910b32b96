"""A Word document (.docx): its paragraphs, list items (Word's own list numbers counted,
`word_lists.py`) and tables, in order, as blocks for the segmenter (`segment.py`), which
makes the items; headings (Word's heading styles) make section paths. A table with `id`
and `text` columns is read like a CSV, a row an item. Text in content controls, tracked
insertions and nested tables is read; a text box's paragraphs are paragraphs of their
own after the one that anchors it, read once (not again in its copy for older readers);
a merged table cell is read in each column and row it covers.

The package is read with lxml, a part at a time, each part parsed as a stream and each
block dropped once read: memory is bounded by one block, never by the document. No
entity is ever expanded, and a part that declares a DTD is refused by the parser's own
account of what it read, whatever the part's encoding or name.

Refused in one line, before anything is read: a password-protected file (an encrypted
Word file is an OLE container, not a zip), a damaged one, one that carries macros (a
`vbaProject.bin` part, as a .docm does), one whose parts inflate past MAX_PART_BYTES
each or MAX_PACKAGE_BYTES together (a zip bomb: sizes checked as declared and as
actually inflated, a chunk at a time), one whose main part inflates past
MAX_MAIN_PART_BYTES. Refused when reading reaches it: a part declaring a DTD, a part of
more than MAX_ELEMENTS elements, a document of more than MAX_PARAGRAPHS paragraphs.
"""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from librarian.pipeline.shapes.csv_table import TABLE_KEYS, table_row
from librarian.pipeline.shapes.rows import (
    MAX_ITEMS,
    PlainInputError,
    PlainRow,
    PlainShape,
    Split,
    Unreadable,
    heading_title,
    requirement_id,
    requirement_shaped,
)
from librarian.pipeline.shapes.segment import Block, Segmenter, table_columns
from librarian.pipeline.shapes.word_lists import Numbering, numbered_id

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# Inflated size limits of a package's parts (docs/reliability.md).
MAX_PART_BYTES = 128 * 1024 * 1024
MAX_PACKAGE_BYTES = 512 * 1024 * 1024
INFLATE_CHUNK = 1024 * 1024
DOCTYPE = b"<!DOCTYPE"
# What one document may hold (docs/reliability.md). A 500-page standard has ~15,000
# paragraphs, its table cells' included; Word writes 10-40 XML elements and 0.3-1.5 KB
# of XML a paragraph. Past these a file is refused, not read in part: each bounds the
# time and memory a small hostile file could cost (3 million empty paragraphs, 4.5 min).
MAX_PARAGRAPHS = MAX_ITEMS  # one number for every shape: a paragraph is at most an item
MAX_ELEMENTS = 1_000_000  # in any one part read
MAX_MAIN_PART_BYTES = 32 * 1024 * 1024
MAX_GRID_COLUMNS = 63  # Word's widest table: a merged cell spans at most this many


W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
PARAGRAPH = f"{W}p"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}"
TYPES = "{http://schemas.openxmlformats.org/package/2006/content-types}"
# The content types of a Word document's main part (python-docx's, and a .docm's).
WORD_MAIN = frozenset(
    "application/" + kind
    for kind in (
        "vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
        "vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
        "vnd.ms-word.document.macroEnabled.main+xml",
        "vnd.ms-word.template.macroEnabledTemplate.main+xml",
    )
)
# Containers whose children are the document's own blocks: a content control, a tracked
# insertion, custom XML and smart tags wrap paragraphs and tables (and a table's rows and
# cells), and their text counts.
BLOCK_WRAPPERS = {f"{W}sdt", f"{W}sdtContent", f"{W}ins", f"{W}customXml", f"{W}smartTag"}
# What a paragraph's text leaves out: a text box (read as paragraphs of its own), and a
# drawing's copy for older readers (its VML fallback).
_ASIDE = (f"{W}txbxContent", f"{MC}Fallback")


def read(path: Path) -> Iterator[PlainRow | Unreadable | Split]:
    sizes = _open(path)
    with zipfile.ZipFile(path) as zipped:
        package = _Package.of(path, zipped, sizes)
        styles, headings = package.styles()
        walker = _Walker(styles, package.numbering(), headings)
        for kind, block in package.blocks():
            yield from (walker.table(block) if kind == "table" else walker.paragraph(block))
    yield from walker.segmenter.end()
    if not walker.read_any:
        raise PlainInputError(f"{path} has no text: nothing to link (is it an empty document?)")
    yield walker.segmenter.split


def _blocks(parent: Any) -> Iterator[tuple[str, Any]]:
    """A container's paragraphs and tables in order, those inside content controls and
    tracked insertions included."""
    for child in parent.iterchildren():
        yield from _blocks_of(child)


def _blocks_of(child: Any) -> Iterator[tuple[str, Any]]:
    if child.tag == f"{W}p":
        yield "paragraph", child
    elif child.tag == f"{W}tbl":
        yield "table", child
    elif child.tag in BLOCK_WRAPPERS:
        yield from _blocks(child)


def _own(parent: Any, tag: str) -> Iterator[Any]:
    """A table's rows, or a row's cells: its children of `tag`, those wrapped in content
    controls or custom XML included (a nested table's never)."""
    for child in parent.iterchildren():
        if child.tag == tag:
            yield child
        elif child.tag in BLOCK_WRAPPERS:
            yield from _own(child, tag)


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
    for tr in _own(tbl, f"{W}tr"):
        row = [_Cell("")] * _count(tr.find(f"{W}trPr/{W}gridBefore"), 0)
        wider: list[str] = []  # cells past Word's widest table: read into its last column
        for tc in _own(tr, f"{W}tc"):
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
    for kind, block in _blocks(tc):
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


@dataclass
class _Package:
    """A Word package's parts as the reader needs them: found through its relationships
    (the main part by its content type, whatever its name), each parsed as a stream."""

    path: Path
    zipped: zipfile.ZipFile
    main: str = ""
    related: dict[str, str] = field(default_factory=dict)  # relationship kind -> part
    paragraphs: int = 0

    @classmethod
    def of(cls, path: Path, zipped: zipfile.ZipFile, sizes: dict[str, int]) -> _Package:
        package = cls(path, zipped)
        main = package.relationships("_rels/.rels", "").get("officeDocument")
        if main is None or main not in sizes:
            raise PlainInputError(f"{path} is damaged: it names no main document part")
        kind = package.content_type(main)
        if kind not in WORD_MAIN:
            raise PlainInputError(
                f"{path} is not a Word document: its main part {main} is {kind or 'untyped'}"
            )
        if sizes[main] > MAX_MAIN_PART_BYTES:
            raise PlainInputError(
                f"{path} is too large to read as one document: its main part inflates to "
                f"{sizes[main] / 2**20:.0f} MiB, past the {MAX_MAIN_PART_BYTES // 2**20} MiB "
                f"(about {MAX_PARAGRAPHS:,} paragraphs) the librarian reads; split it into parts"
            )
        folder, name = posixpath.split(main)
        package.main = main
        package.related = package.relationships(
            posixpath.join(folder, "_rels", f"{name}.rels"), folder
        )
        return package

    def blocks(self) -> Iterator[tuple[str, Any]]:
        """The body's paragraphs and tables in order, each dropped once read."""
        for child in self.children(self.main, f"{W}body"):
            yield from _blocks_of(child)

    def numbering(self) -> Numbering:
        return Numbering.of(self.children(self.related.get("numbering"), f"{W}numbering"))

    def styles(self) -> tuple[dict[str, str], dict[str, int]]:
        """Style id -> name, and style id -> the heading level its paragraphs have (from
        1): a heading style ("Heading 2"), or any style with an outline level of its own
        or from the style it is based on (a house's "Policy Chapter" built on Heading 1, a
        heading style with a translated name)."""
        from docx.styles import BabelFish  # Word's stored names: "heading 1" is "Heading 1"

        names: dict[str, str] = {}
        own: dict[str, int] = {}
        based: dict[str, str | None] = {}
        for style in self.children(self.related.get("styles"), f"{W}styles"):
            style_id = style.get(f"{W}styleId")
            if style.tag != f"{W}style" or style_id is None:
                continue
            name = style.find(f"{W}name")
            names[style_id] = (
                BabelFish.internal2ui(name.get(f"{W}val", "")) if name is not None else ""
            )
            words = names[style_id].split()
            level = style.find(f"{W}pPr/{W}outlineLvl")
            value = level.get(f"{W}val") if level is not None else None
            if value is not None and value.isdigit() and int(value) < BODY_LEVEL:
                own[style_id] = int(value) + 1
            elif words[:1] == ["Heading"] and words[-1].isdigit():
                own[style_id] = int(words[-1])
            parent = style.find(f"{W}basedOn")
            based[style_id] = parent.get(f"{W}val") if parent is not None else None
        return names, inherited_levels(own, based)

    def relationships(self, rels: str, folder: str) -> dict[str, str]:
        """A part's relationships (`.rels`): kind ("styles", "officeDocument") -> the
        part it names, the first of each kind; none when the part has no `.rels`."""
        if rels not in self.zipped.NameToInfo:
            return {}
        found: dict[str, str] = {}
        for rel in self.children(rels, f"{RELS}Relationships"):
            if rel.tag != f"{RELS}Relationship" or rel.get("TargetMode") == "External":
                continue
            target = unquote(rel.get("Target", ""))
            part = target[1:] if target.startswith("/") else posixpath.join(folder, target)
            found.setdefault(rel.get("Type", "").rsplit("/", 1)[-1], posixpath.normpath(part))
        return found

    def content_type(self, part: str) -> str:
        overrides: dict[str, str] = {}
        defaults: dict[str, str] = {}
        if "[Content_Types].xml" not in self.zipped.NameToInfo:
            return ""
        for entry in self.children("[Content_Types].xml", f"{TYPES}Types"):
            if entry.tag == f"{TYPES}Override":
                overrides[entry.get("PartName", "").lstrip("/").lower()] = entry.get(
                    "ContentType", ""
                )
            elif entry.tag == f"{TYPES}Default":
                defaults[entry.get("Extension", "").lower()] = entry.get("ContentType", "")
        extension = posixpath.splitext(part)[1].lstrip(".").lower()
        return overrides.get(part.lower()) or defaults.get(extension, "")

    def children(self, part: str | None, container: str) -> Iterator[Any]:
        """The elements of `part` whose parent is a `container`, each whole and in order,
        dropped once the caller has read it; none when there is no such part. Parsed as
        a stream, entities never expanded: a DTD, more than MAX_ELEMENTS elements or (in
        all) MAX_PARAGRAPHS paragraphs refused as they are met."""
        from lxml import etree  # type: ignore[import-untyped]

        if part is None or part not in self.zipped.NameToInfo:
            return
        elements = 0
        try:
            with self.zipped.open(part) as stream:
                for _, element in etree.iterparse(
                    stream, events=("end",), resolve_entities=False, no_network=True,
                    load_dtd=False, remove_blank_text=True,
                ):  # fmt: skip
                    elements += 1  # counted here, not in a call: a part may hold a million
                    if elements > MAX_ELEMENTS:
                        raise self._too_many(part)
                    if element.tag == PARAGRAPH:
                        self.paragraphs += 1
                        if self.paragraphs > MAX_PARAGRAPHS:
                            raise self._too_long()
                    if elements == 1:
                        self._no_dtd(part, element)
                    parent = element.getparent()
                    if parent is not None and parent.tag == container:
                        yield element
                        element.clear()
                        while element.getprevious() is not None:
                            del parent[0]
        except (etree.XMLSyntaxError, zipfile.BadZipFile, OSError, EOFError) as exc:
            raise PlainInputError(
                f"{self.path} is damaged: its part {part} does not parse ({exc})"
            ) from exc

    def _no_dtd(self, part: str, element: Any) -> None:
        info = element.getroottree().docinfo
        if info.doctype or info.internalDTD is not None or info.externalDTD is not None:
            raise _declares_dtd(self.path, part)

    def _too_many(self, part: str) -> PlainInputError:
        return PlainInputError(
            f"{self.path}: its part {part} holds more than {MAX_ELEMENTS:,} XML elements, "
            f"more than a Word document of {MAX_PARAGRAPHS:,} paragraphs does: none of it "
            "is read (split the document, or save a copy from Word)"
        )

    def _too_long(self) -> PlainInputError:
        return PlainInputError(
            f"{self.path} holds more than {MAX_PARAGRAPHS:,} paragraphs (table cells' and "
            "text boxes' counted), more than the librarian reads as one document: none of "
            "it is read; split it into parts"
        )


def inherited_levels(own: dict[str, int], based: dict[str, str | None]) -> dict[str, int]:
    """Each style's heading level: its own, else that of the nearest style it is based on
    that has one. Memoised, so each style is visited once however long its chain (30,000
    styles, each based on the one before, took 50 s walked from every start); a chain
    that loops back on itself has none."""
    found: dict[str, int | None] = dict(own)
    for start in based:
        chain: list[str] = []
        seen: set[str] = set()
        at: str | None = start
        while at is not None and at not in found and at not in seen:
            chain.append(at)
            seen.add(at)
            at = based.get(at)
        level = found.get(at) if at is not None else None
        found.update((style, level) for style in chain)
    return {style: level or 1 for style, level in found.items() if level is not None}


BODY_LEVEL = 9  # Word's outline level of body text


def _open(path: Path) -> dict[str, int]:
    """Each part's inflated size, or the one-line refusal of a file the reader must not
    read."""
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
    sizes = _check_parts(path)
    if any(name.lower().endswith("vbaproject.bin") for name in names):
        raise PlainInputError(
            f"{path} carries macros: save it as a plain .docx (Word: File > Save As > Word "
            "Document), which drops them"
        )
    return sizes


def _check_parts(path: Path) -> dict[str, int]:
    """Each part's inflated size; a package refused whose XML declares a DTD anywhere, or
    whose parts inflate past the limits: each part streamed a chunk at a time, its
    declared and its actual inflated size counted (a zip entry may lie about its size)."""
    total = 0
    sizes: dict[str, int] = {}
    with zipfile.ZipFile(path) as package:
        infos = package.infolist()
        declared = sum(info.file_size for info in infos)
        if declared > MAX_PACKAGE_BYTES or any(i.file_size > MAX_PART_BYTES for i in infos):
            raise _too_big(path, max(declared, *(i.file_size for i in infos)))
        for info in infos:
            sizes[info.filename] = _scan_part(path, package, info.filename, total)
            total += sizes[info.filename]
    return sizes


def _scan_part(path: Path, package: zipfile.ZipFile, name: str, before: int) -> int:
    """The part's inflated size, read a chunk at a time; a size past the limits refused on
    the way, and a DTD in a part named as XML (the parser refuses one in any part read)."""
    size, tail = 0, b""
    xml = name.lower().endswith((".xml", ".rels"))
    try:
        with package.open(name) as part:
            while chunk := part.read(INFLATE_CHUNK):
                size += len(chunk)
                if size > MAX_PART_BYTES or before + size > MAX_PACKAGE_BYTES:
                    raise _too_big(path, before + size)
                if xml and DOCTYPE in (tail + chunk).upper():
                    raise _declares_dtd(path, name)
                tail = chunk[-len(DOCTYPE) :]
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise PlainInputError(
            f"{path} is damaged: its part {name} does not inflate ({exc})"
        ) from exc
    return size


def _declares_dtd(path: Path, part: str) -> PlainInputError:
    return PlainInputError(
        f"{path} is damaged: its part {part} declares a DTD (entities), which no Word "
        "document does; save a copy from Word"
    )


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

    def paragraph(self, p: Any) -> Iterator[PlainRow | Unreadable]:
        """The paragraph, then each text box it anchors, its paragraphs and tables read
        as the body's."""
        self.paragraphs += 1
        text, boxes = paragraph_text(p)
        if text:
            yield from self._text(p, text, f"paragraph {self.paragraphs}")
        for box in boxes:
            for kind, block in _blocks(box):
                yield from (self.table(block) if kind == "table" else self.paragraph(block))

    def _text(self, p: Any, text: str, where: str) -> Iterator[PlainRow]:
        self.read_any = True
        style_ref = p.find(f"{W}pPr/{W}pStyle")
        style_id = style_ref.get(f"{W}val") if style_ref is not None else ""
        style = self.styles.get(style_id, "")
        if style == "Title":  # the document's name, unless it states a requirement
            if requirement_id(text) is not None or requirement_shaped(text):
                yield from self.segmenter.feed(Block("paragraph", text, where))
            return
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
        grid = table_rows(tbl)
        self.read_any = self.read_any or any(any(shown(row)) for row in grid)
        header = [h.lower() for h in shown(grid[0])] if grid else []
        where = f"table {self.tables}"
        if set(header) >= TABLE_KEYS:
            merged = read_merged(grid, header.index("id"), header.index("text"), 1)
            for number, row in enumerate(merged[1:], start=2):
                if row is not None and any(row):
                    named = dict(zip(header, row, strict=False))
                    yield from self.segmenter.row(table_row(0, named, f"{where}, row {number}"))
            return
        grid = [row for row in grid if any(c.strip() for c in shown(row))]  # as the segmenter
        reading = table_columns([shown(row) for row in grid])
        rows: list[list[str] | None] = [shown(row) for row in grid]
        if reading is not None:
            rows = read_merged(grid, reading.ids, reading.text, reading.first)
        cells = tuple(tuple(row) for row in rows if row is not None)
        yield from self.segmenter.feed(Block("table", "", where, cells=cells))


SHAPE = PlainShape("a Word document (.docx)", (".docx", ".docm"), read, binary=True)
