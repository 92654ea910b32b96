"""A Word document (.docx): its paragraphs, list items (Word's own list numbers counted,
`word_lists.py`) and tables, in order, as blocks for the segmenter (`segment.py`), which
makes the items; headings (Word's heading styles) make section paths. A table with `id`
and `text` columns is read like a CSV, a row an item. Text in content controls, tracked
insertions and nested tables is read; a text box's paragraphs are paragraphs of their
own after the one that anchors it, read once (not again in its copy for older readers);
a merged table cell is read in each column and row it covers.

The package is read with lxml, a part at a time, each part parsed as a stream and each
block's XML dropped once read (`word_xml.py`): memory holds the document's text, not its
XML (the segmenter learns the document's numbering from all of its paragraphs before it
makes an item, `labels.py`). No
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
from librarian.pipeline.shapes.ooxml import (
    MAGIC,
    Package,
    checked_package,
    declares_dtd,
)
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
from librarian.pipeline.shapes.segment import Block, Segmenter
from librarian.pipeline.shapes.table_reading import table_columns
from librarian.pipeline.shapes.word_lists import Numbering, numbered_id
from librarian.pipeline.shapes.word_xml import (
    W,
    blocks,
    blocks_of,
    paragraph_text,
    read_merged,
    shown,
    table_rows,
)

# What one document may hold (docs/reliability.md). A 500-page standard has ~15,000
# paragraphs, its table cells' included; Word writes 10-40 XML elements and 0.3-1.5 KB
# of XML a paragraph. Past these a file is refused, not read in part: each bounds the
# time and memory a small hostile file could cost (3 million empty paragraphs, 4.5 min).
MAX_PARAGRAPHS = MAX_ITEMS  # one number for every shape: a paragraph is at most an item
MAX_ELEMENTS = 1_000_000  # in any one part read
MAX_MAIN_PART_BYTES = 32 * 1024 * 1024


PARAGRAPH = f"{W}p"
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


def read(path: Path) -> Iterator[PlainRow | Unreadable | Split]:
    sizes = checked_package(path, WORD)
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
            yield from blocks_of(child)

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
            raise declares_dtd(self.path, part, WORD)

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


@dataclass
class _Walker:
    styles: dict[str, str]  # style id -> name
    lists: Numbering  # Word's list numbering, counted as the paragraphs are read
    headings: dict[str, int]  # style id -> heading level
    segmenter: Segmenter = field(default_factory=Segmenter)
    read_any: bool = False  # any paragraph or table row with text
    paragraphs: int = 0
    tables: int = 0
    deepest: int = 0  # the deepest heading level its styles gave so far

    def paragraph(self, p: Any) -> Iterator[PlainRow | Unreadable]:
        """The paragraph, then each text box it anchors, its paragraphs and tables read
        as the body's."""
        self.paragraphs += 1
        text, boxes = paragraph_text(p)
        if text:
            yield from self._text(p, text, f"paragraph {self.paragraphs}")
        for box in boxes:
            for kind, block in blocks(box):
                yield from (self.table(block) if kind == "table" else self.paragraph(block))

    def _text(self, p: Any, text: str, where: str) -> Iterator[PlainRow]:
        first, self.read_any = not self.read_any, True
        style_ref = p.find(f"{W}pPr/{W}pStyle")
        style_id = style_ref.get(f"{W}val") if style_ref is not None else ""
        style = self.styles.get(style_id, "")
        set_bold = style_id not in self.headings and _set_as_heading(p, text)
        if style == "Title" or (first and set_bold):
            # The document's name (a Title, or its first line set bold), unless it
            # states a requirement.
            if requirement_id(text) is not None or requirement_shaped(text):
                yield from self.segmenter.feed(Block("paragraph", text, where))
            return
        if (level := self._heading_level(p, style_id)) is not None:
            self.deepest = max(self.deepest, level)
            yield from self.segmenter.feed(Block("heading", self._numbered(p, text), where, level))
            return
        if set_bold:  # a house's heading set by hand: a short line, bold, no sentence
            heading = Block("heading", heading_title(text), where, self.deepest + 1)
            yield from self.segmenter.feed(heading)
            return
        yield from self.segmenter.feed(self._listed(p, style, text, where))

    def _heading_level(self, p: Any, style_id: str) -> int | None:
        """The paragraph's heading level: its own outline level, else its style's."""
        own = p.find(f"{W}pPr/{W}outlineLvl")
        value = own.get(f"{W}val") if own is not None else None
        if value is not None and value.isdigit():
            return int(value) + 1 if int(value) < BODY_LEVEL else None
        return self.headings.get(style_id)

    def _numbered(self, p: Any, text: str) -> str:
        """A heading's title; a heading numbered in a list ("4 Access control") counted
        there, so that the clauses numbered under it in the same list read "4.1" (its
        title, as any heading's, without its number)."""
        listed = _list_of(p)
        if listed is not None:
            self.lists.label(*listed)
        return heading_title(text)

    def _listed(self, p: Any, style: str, text: str, where: str) -> Block:
        """The paragraph as a block: a list item (Word's number put before a text it
        identifies, "1.2 Users must …", as the PDF Word saves shows it), or not."""
        if style.startswith("List Number"):
            return Block("numbered", text, where)
        if style.startswith("List Bullet"):
            return Block("bullet", text, where)
        listed = _list_of(p)
        if listed is None:
            return Block("paragraph", text, where)
        bullet, label = self.lists.label(*listed)
        if bullet:
            return Block("bullet", text, where)
        found = numbered_id(label)
        return (
            Block("paragraph", f"{found} {text}", where)
            if found
            else Block("numbered", text, where, label=label)
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


def _list_of(p: Any) -> tuple[str, str] | None:
    """The list a paragraph is numbered in (`w:numId`) and its level; None: none, or
    numbering turned off ("0")."""
    numbered = p.find(f"{W}pPr/{W}numPr")
    num = numbered.find(f"{W}numId") if numbered is not None else None
    if num is None or num.get(f"{W}val") in (None, "0"):
        return None
    level = numbered.find(f"{W}ilvl")
    return num.get(f"{W}val"), level.get(f"{W}val") if level is not None else "0"


# A heading set by hand is at most this long (a PDF's: pdf.MAX_HEADING_CHARS).
MAX_HEADING_CHARS = 80


def _set_as_heading(p: Any, text: str) -> bool:
    """A paragraph set as a heading by hand: every run of it bold, short, no sentence
    (no full stop, no colon: "Note:" set bold leads a note), no requirement's words."""
    runs = [r for r in p.iter(f"{W}r") if any((t.text or "").strip() for t in r.iter(f"{W}t"))]
    return (
        bool(runs)
        and all(_bold(r) for r in runs)
        and len(text) <= MAX_HEADING_CHARS
        and not text.rstrip().endswith((".", ";", ":", ",", "!", "?"))
        and requirement_id(text) is None
        and not requirement_shaped(text)
    )


def _bold(run: Any) -> bool:
    bold = run.find(f"{W}rPr/{W}b")
    return bold is not None and bold.get(f"{W}val", "true") not in ("0", "false", "off")


WORD = Package("Word document", ".docx", "Word: File > Save As > Word Document")

SHAPE = PlainShape("a Word document (.docx)", (".docx", ".docm"), read, binary=True, magic=MAGIC)
