"""A PDF, read with pypdf: text by line with its page, line, size and weight, running
headers and footers removed, a table of contents skipped, two-column pages read a column
at a time, filled form fields read where they sit. Headings from the outline (bookmarks),
numbered headings ("4.2.1 Session management") it does not list, and, without an
outline, lines set in a heading's size or weight; the title apart. Lines make paragraphs
(a wider gap than the page's line pitch ends one, as does a line opening with an id or a
list marker), and the paragraphs are blocks for the segmenter (`segment.py`), which
makes the items, as it does for a Word file of the same document.

Refused in one line: a damaged file, one that needs a password to open, and one with no
text layer (a scan: nothing to read without OCR). A page drawing more rules than the table
reader takes (`pdf_tables`' limits) is read as lines of text, with a warning.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path
from typing import Any

from librarian.pipeline.shapes.clauses import HEADING_LABEL
from librarian.pipeline.shapes.labels import Numbering
from librarian.pipeline.shapes.markers import BULLET, NUMBER
from librarian.pipeline.shapes.notes import is_note
from librarian.pipeline.shapes.pdf_furniture import without_running
from librarian.pipeline.shapes.pdf_tables import Boxes, Fragment, Rules, Table, TooManyRules, tables
from librarian.pipeline.shapes.rows import (
    Magic,
    PlainInputError,
    PlainRow,
    PlainShape,
    Split,
    Unreadable,
    requirement_id,
)
from librarian.pipeline.shapes.rows import heading_title as titled
from librarian.pipeline.shapes.segment import (
    Block,
    Segmenter,
    imperative,
    starts_item,
    states_requirement,
)

# A numbered heading when there is no outline: a short line, "4.2 Title words", no
# closing full stop (a requirement "4.2.1 Passwords must be hashed." is a sentence).
NUMBERED_HEADING = re.compile(r"^(?P<number>\d+(?:\.\d+)*)\.?\s+(?P<title>[^\W\d].{0,78}[^.:;,])$")
# A numbered heading is no deeper than this ("1.2.3.4.5.6.7.8"): a longer number is a
# line of figures (and each level a heading deep is one more part of every row's path).
MAX_HEADING_DEPTH = 8
SAME_LINE = 2.0  # points: text fragments this close in height are one line
# Typeset ligatures, as the text a Word file holds spells them ("ﬁle" is "file").
LIGATURES = str.maketrans(
    {
        "\ufb00": "ff",
        "\ufb01": "fi",
        "\ufb02": "fl",
        "\ufb03": "ffi",
        "\ufb04": "ffl",
        "\ufb06": "st",
    }
)
PARAGRAPH_GAP = 1.3  # a gap this many times the page's line pitch ends a paragraph
LINE_PITCH = 1.4  # the widest line pitch of running text, in ems (Word's is ~1.25)


def table_of_contents(text: str) -> bool:
    r"""A line of a table of contents: four dot leaders or more (spaces between them allowed),
    then a page number; read back from its end, once (`(?:\.\s*){4,}\d+\s*$`, searched,
    ran through every dot after each dot: a line of 40,000 dots took 22 s)."""
    end = len(text.rstrip())
    digits = end
    while digits > 0 and text[digits - 1].isdecimal():
        digits -= 1
    dots = 0
    for char in reversed(text[:digits] if digits < end else ""):
        if char == ".":
            dots += 1
            if dots >= 4:
                return True
        elif not char.isspace():
            return False
    return False


@dataclass(frozen=True)
class Line:
    page: int  # from 1
    number: int  # its line on the page, from 1
    y: float  # from the bottom of the page, in points
    text: str
    size: float = 0.0  # its largest font size, in points (0: unknown)
    bold: bool = False
    cells: tuple[tuple[str, ...], ...] = ()  # a ruled table, read whole (`pdf_tables.py`)


@dataclass(frozen=True)
class Heading:
    page: int
    top: float | None  # the outline destination's top; None: from the top of the page
    level: int
    title: str


def read(path: Path) -> Iterator[PlainRow | Unreadable | Split]:
    with _pypdf_said() as said:
        reader = _open(path, said)
        pages: list[list[Line]] = []
        numbers, unread = _page_numbers(reader, said)  # unread: page -> why it is lost
        warnings: list[str] = []
        for n, page in zip(numbers, reader.pages, strict=False):
            lines, why = _lines(page, n, said, warnings)
            pages.append(lines)
            if why is not None:
                unread[n] = why
        if not any(pages) and not unread:
            raise PlainInputError(
                f"{path} has no text layer (a scanned document?): run OCR on it first, or "
                "give the text as CSV or Markdown"
            )
        kept, furniture = without_running(pages)
        lines = [line for page in kept for line in page]
        numbering = Numbering.learnt(line.text for line in lines)
        segmenter = Segmenter(numbering=numbering)
        sections = _Sections(_outline(reader), _body_size(lines), numbering=numbering)
        for block in sections.blocks(lines):
            yield from segmenter.feed(block)
        yield from segmenter.end()
    segmenter.split.furniture.extend(furniture)
    segmenter.split.warnings.extend(warnings)
    # A page whose text could not be extracted is rejected with its number: never a
    # document read with sections silently missing.
    for offset, (n, why) in enumerate(sorted(unread.items()), start=1):
        yield Unreadable(segmenter.count + offset, f"page {n}", f"page {n} cannot be read: {why}")
    yield segmenter.split


# How deep a page tree may nest before it is taken for a loop (real files: 2 to 4 levels).
PAGE_TREE_DEPTH = 32


def _page_numbers(reader: Any, said: list[str]) -> tuple[list[int], dict[int, str]]:
    """Each page pypdf reads, numbered as the document's page tree places it, and the
    pages of the tree pypdf cannot read at all (a damaged page object: pypdf drops it
    from `pages` with only a log line, and every later page's number would shift)."""
    numbers: list[int] = []
    lost: dict[int, str] = {}

    def walk(node: Any, depth: int) -> None:
        for kid in node.get("/Kids", []) if depth < PAGE_TREE_DEPTH else []:
            found = kid.get_object() if hasattr(kid, "get_object") else kid
            where = len(numbers) + len(lost) + 1
            if not hasattr(found, "get"):
                number = getattr(kid, "idnum", "?")
                why = f"; pypdf: {said[-1]}" if said else ""
                lost[where] = f"its page object ({number} 0 obj) is damaged{why}"
            elif found.get("/Type") == "/Pages":
                walk(found, depth + 1)
            else:
                numbers.append(where)

    try:
        walk(reader.trailer["/Root"]["/Pages"], 0)
    except (KeyError, TypeError, AttributeError, ValueError):
        return list(range(1, len(reader.pages) + 1)), {}
    if len(numbers) != len(reader.pages):  # a tree pypdf reads its own way: trust pypdf
        return list(range(1, len(reader.pages) + 1)), lost
    return numbers, lost


@contextmanager
def _pypdf_said() -> Iterator[list[str]]:
    """pypdf's own log lines while a file is read, kept (for our messages) instead of
    printed beside them."""
    said: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(" ".join(record.getMessage().split()))

    logger = logging.getLogger("pypdf")
    handler, propagate = Keep(logging.WARNING), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield said
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _open(path: Path, said: list[str]) -> Any:
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, PdfReadError, PdfStreamError

    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted and not reader.decrypt(""):
            raise PlainInputError(
                f"{path} is encrypted and needs a password to open: save a copy without one"
            )
        len(reader.pages)  # a broken page tree shows here
    except DependencyError as exc:
        raise PlainInputError(
            f"{path} is encrypted in a way this install cannot open ({exc})"
        ) from exc
    except (PdfReadError, PdfStreamError, ValueError, KeyError, TypeError) as exc:
        also = f"; pypdf: {said[-1]}" if said else ""
        raise PlainInputError(f"{path} is damaged: pypdf cannot read it ({exc}{also})") from exc
    return reader


def _lines(
    page: Any, number: int, said: list[str], warnings: list[str]
) -> tuple[list[Line], str | None]:
    """The page's text lines in reading order (a two-column page: the left column, then
    the right), each with its height on the page, and the values of its filled form
    fields; and why the page could not be read (None: it could), from pypdf's error or
    its log. A page that draws more rules than the table reader takes has its tables
    read as lines of text, and `warnings` says so."""
    fragments: list[Fragment] = []
    before = len(said)

    def visit(text: str, cm: Sequence[float], tm: Sequence[float], font: Any, size: Any) -> None:
        if text.strip():
            x = _finite(tm[4] * cm[0] + tm[5] * cm[2] + cm[4])
            y = _finite(tm[4] * cm[1] + tm[5] * cm[3] + cm[5])
            scale = abs(tm[3] * cm[3]) or 1.0
            name = str(font.get("/BaseFont", "")) if hasattr(font, "get") else ""
            bold = any(w in name for w in ("Bold", "Black", "Heavy"))
            fragments.append(Fragment(y, x, text, float(size or 0) * scale, bold))

    rules = Rules()
    try:
        page.extract_text(visitor_text=visit, visitor_operand_before=rules.visit)
    except Exception as exc:  # pypdf raises many kinds on a broken content stream
        return [], f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    fragments.extend(_field_values(page))
    if len(said) > before and not fragments:
        return [], said[before][:200]
    if not fragments and (broken := _undecodable(page)) is not None:
        return [], broken
    try:
        found, fragments = tables(rules, fragments)
    except TooManyRules as exc:
        found = []
        warnings.append(f"warning: page {number} is not read as tables: {exc}")
    out: list[Line] = []
    for column in _columns(fragments, _width(page)):
        out.extend(_rows(column, number, len(out), Boxes.of(rules.boxes)))
    return _with_tables(out, found, number), None


def _finite(value: float) -> float:
    """A place on the page; one past a float's range (a hostile matrix) at the origin,
    where sorting by it still works."""
    return value if math.isfinite(value) else 0.0


def _with_tables(lines: list[Line], found: list[Table], page: int) -> list[Line]:
    """Each table as one line of its own, before the first line below its top."""
    for table in sorted(found, key=lambda t: -t.top):
        at = next((i for i, ln in enumerate(lines) if ln.y < table.top), len(lines))
        lines.insert(at, Line(page, 0, table.top, "", table.size, cells=table.cells))
    return [replace(ln, number=n) for n, ln in enumerate(lines, start=1)]


def _rows(
    fragments: list[Fragment], page: int, before: int, boxed: Boxes = Boxes(())
) -> list[Line]:
    """Fragments at one height joined into lines, top to bottom; a line with a box drawn
    just before it (a checklist's) opens with "☐", as it would if the box were typed."""
    rows: list[list[Fragment]] = []
    for fragment in sorted(fragments, key=lambda f: (-f.y, f.x)):
        if rows and abs(rows[-1][0].y - fragment.y) <= SAME_LINE:
            rows[-1].append(fragment)
        else:
            rows.append([fragment])
    out: list[Line] = []
    for row in rows:
        text = " ".join(" ".join(f.text for f in sorted(row, key=lambda f: f.x)).split())
        text = text.translate(LIGATURES)
        if text and boxed.before(row):
            text = "\u2610 " + text
        if text:
            size, bold = max(f.size for f in row), all(f.bold for f in row)
            out.append(Line(page, before + len(out) + 1, row[0].y, text, size, bold))
    return out


def _width(page: Any) -> float:
    try:
        return float(page.mediabox.width)
    except Exception:  # a page without a usable box: no columns found
        return 0.0


# A page's second column starts this far across it (a share of its width).
COLUMN_FROM, COLUMN_TO = 0.35, 0.65


def _columns(fragments: list[Fragment], width: float) -> list[list[Fragment]]:
    """A page's columns, left to right: two when three or more lines start at one place
    in the middle of the page and no line on its left runs into it, and the left lines
    fill their column (a table's narrow id column beside its text is one page)."""
    middle = Counter(
        round(f.x) for f in fragments if width and COLUMN_FROM * width < f.x < COLUMN_TO * width
    )
    if not middle:
        return [fragments]
    start, starting = middle.most_common(1)[0]
    left = [f for f in fragments if f.x < start - SAME_LINE]
    right = [f for f in fragments if f.x >= start - SAME_LINE]
    if starting < 3 or len(left) < 3 or any(f.x + f.width > start + f.size for f in left):
        return [fragments]
    margin = min(f.x for f in left)
    filled = sorted(f.x + f.width - margin for f in left)[len(left) // 2]
    return [left, right] if filled >= 0.6 * (start - margin) else [fragments]


def _field_values(page: Any) -> list[Fragment]:
    """The text of a page's filled form fields, where each field sits (a field's value
    lives in the form, not in the page's text)."""
    out: list[Fragment] = []
    try:
        annotations = page.get("/Annots") or []
        for ref in annotations:
            annot = ref.get_object()
            if annot.get("/Subtype") != "/Widget":
                continue
            value = annot.get("/V")
            if value is None and annot.get("/Parent") is not None:
                value = annot["/Parent"].get_object().get("/V")
            if not isinstance(value, str) or value.startswith("/") or not value.strip():
                continue  # a check box's state is a name ("/Yes"), no text
            left, _, _, top = (_finite(float(v)) for v in annot.get("/Rect", [0, 0, 0, 0]))
            out.append(Fragment(top, left, " ".join(value.split())))
    except Exception:  # a damaged annotation: its page's own text still reads
        return out
    return out


def _undecodable(page: Any) -> str | None:
    """Why a page with no text has content that did not decode (pypdf recovers a broken
    Flate stream to nothing, saying nothing); None when it has none, or it decoded."""
    try:
        contents = page.get("/Contents")
        streams = contents.get_object() if contents is not None else None
        parts = list(streams) if isinstance(streams, list) else [streams]
        for part in (p.get_object() for p in parts if p is not None):
            raw = getattr(part, "_data", b"")
            if raw and not part.get_data():
                return f"its content stream ({len(raw)} bytes) decodes to nothing"
    except Exception as exc:  # what pypdf raises on a stream it cannot decode at all
        return f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    return None


def _outline(reader: Any) -> list[Heading]:
    headings: list[Heading] = []

    def walk(items: list[Any], level: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
                continue
            try:
                page = reader.get_destination_page_number(item) + 1
            except Exception:
                continue
            top = getattr(item, "top", None)
            title = " ".join(str(item.title).split())
            headings.append(Heading(page, float(top) if top is not None else None, level, title))

    try:
        walk(list(reader.outline), 1)
    except Exception:
        return []
    return sorted(headings, key=lambda h: (h.page, -(h.top if h.top is not None else 1e9)))


_ENDS_SENTENCE = (".", ";", ":", "!", "?")
MAX_HEADING_CHARS = 80


@dataclass
class _Sections:
    """A PDF's lines as blocks: headings (the outline's, and numbered headings set larger
    or bold than its text) and paragraphs, a paragraph ending at a wider gap than the
    page's line pitch, at a line that opens with an id or a list marker, and at a page's
    end after a full stop."""

    outline: list[Heading]
    body_size: float = 0.0
    path: list[tuple[int, str]] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)  # the paragraph being read
    pitch: dict[int, float] = field(default_factory=dict)  # page -> its line pitch
    read_any: bool = False  # a paragraph read
    sizes: dict[float, int] = field(default_factory=dict)  # headings' sizes: their levels
    title_size: float = 0.0  # the title's (0: none found)
    numbering: Numbering = field(default_factory=Numbering)  # the document's own (`labels`)

    def blocks(self, lines: list[Line]) -> Iterator[Block]:
        self.pitch = _pitches(lines)
        self.sizes = {size: n for n, size in enumerate(self._heading_sizes(lines), start=1)}
        styled = sum(1 for ln in lines if self._styled(ln) is not None)
        by_style = len(self.outline) * 2 < styled  # no outline, or one naming few headings
        upcoming = deque(self.outline)
        for at, line in enumerate(lines):
            while upcoming and _reached(upcoming[0], line):
                yield from self.paragraph()
                yield from self.enter(upcoming.popleft())
            if line.cells:
                yield from self.paragraph()
                yield Block("table", "", f"page {line.page}, line {line.number}", cells=line.cells)
                continue
            if table_of_contents(line.text):
                continue  # "2.1 Naming . . . . . 3": the contents, not a section
            heading = NUMBERED_HEADING.match(line.text)
            titles = {line.text, heading.group("title")} if heading else {line.text}
            if self.outline and self.path and self.path[-1][1] in titles | {titled(line.text)}:
                continue  # the heading's own line, numbered or not
            if heading and _plausible(heading) and self._heading(line, lines[at + 1 : at + 2]):
                # A numbered heading the outline does not list (an outline often holds
                # the chapters alone) is a heading too, at its number's depth.
                yield from self.paragraph()
                level = heading.group("number").count(".") + 1
                title = line.text if self.outline else heading.group("title")
                yield from self.enter(Heading(line.page, line.y, level, title))
                continue
            if self._title(line):
                continue
            if by_style and (level := self._styled(line)) is not None:
                # No outline (or one naming few of them): a short line set in a heading's
                # size or weight heads what follows (as Word's headings do once saved as
                # a PDF without bookmarks).
                yield from self.paragraph()
                yield from self.enter(Heading(line.page, line.y, level, line.text))
                continue
            if self.lines and self._starts_paragraph(line):
                yield from self.paragraph()
            self.lines.append(line)
        yield from self.paragraph()

    def enter(self, heading: Heading) -> Iterator[Block]:
        title = titled(heading.title)
        if self.path and self.path[-1] == (heading.level, title):
            return  # a bookmark to the numbered heading just read: the same heading
        self.path = [*(p for p in self.path if p[0] < heading.level), (heading.level, title)]
        where = f"page {heading.page}"
        yield Block("heading", title, where, level=heading.level)

    def paragraph(self) -> Iterator[Block]:
        if not self.lines:
            return
        lines, self.lines = self.lines, []
        self.read_any = True
        text, first = " ".join(ln.text for ln in lines), lines[0]
        where = f"page {first.page}, line {first.number}"
        yield Block("paragraph", text, where)

    def _heading(self, line: Line, after: list[Line]) -> bool:
        """A numbered line is a heading when it is set larger or bold than the text, or,
        numbered "1.2" (not a list's "1."), states no requirement, gives no order (a
        checklist's "1.1 Encrypt all backups at rest" is its item "1.1", as in Word) and
        the next line does not continue its sentence (a numbered list item, "1. Users
        must be …", is none)."""
        if not self.body_size or self._set_apart(line):
            return True
        if NUMBER.match(line.text):
            return False  # "1. Accounts" in the text's own type: a list's item
        continued = bool(after) and after[0].page == line.page and after[0].text[:1].islower()
        worded = states_requirement(line.text) or imperative(titled(line.text))
        return not continued and not worded

    def _title(self, line: Line) -> bool:
        """The document's title: on its first page, before any heading or text, the one
        line set larger than any heading."""
        first = line.page == 1 and not self.path and not self.lines and not self.read_any
        return first and self.title_size > 0 and round(line.size, 1) == self.title_size

    def _set_as_heading(self, line: Line) -> bool:
        """Set apart, short, no sentence: a heading's or the title's line (an id and all;
        a code's "Sec. 4. Access control." ends in a full stop)."""
        text = line.text.strip()
        return (
            self._set_apart(line)
            and len(text) <= MAX_HEADING_CHARS
            and (not text.endswith((".", ";", ":", ",")) or bool(HEADING_LABEL.match(text)))
        )

    def _heading_like(self, line: Line) -> bool:
        text = line.text.strip()
        return (
            self._set_as_heading(line)
            and (text[:1].isupper() or text[:1].isdigit())
            and not states_requirement(text)
            and (requirement_id(text) is None or line.size > self.body_size + 0.5)
            and not BULLET.match(text)
        )  # a numbered heading ("A.5 Organizational controls") is set larger, not bold alone

    def _heading_sizes(self, lines: list[Line]) -> list[float]:
        """The sizes headings are set in, largest first; the title's size apart (the one
        line, on the first page, larger than every other heading)."""
        found = Counter(round(ln.size, 1) for ln in lines if self._set_as_heading(ln))
        sizes = sorted((s for s in found if s > self.body_size + 0.5), reverse=True)
        opens = bool(sizes) and bool(lines) and round(lines[0].size, 1) == sizes[0]
        if sizes and (len(sizes) > 1 or opens) and _one_title(lines, sizes[0]):
            # The title: larger than any heading, or the one size above the text's that
            # opens the document (its headings set bold at the text's size).
            self.title_size = sizes.pop(0)
        return sizes

    def _styled(self, line: Line) -> int | None:
        """A heading's level by its size (the largest first; bold at the text's size
        last), or None: no heading."""
        if not self._heading_like(line):
            return None
        return self.sizes.get(round(line.size, 1), len(self.sizes) + 1)

    def _set_apart(self, line: Line) -> bool:
        return bool(self.body_size) and (line.bold or line.size > self.body_size + 0.5)

    def _starts_paragraph(self, line: Line) -> bool:
        last = self.lines[-1]
        if starts_item(line.text, self.numbering):
            return True
        if is_note(line.text):
            return True
        if line.page != last.page:
            return last.text.rstrip().endswith(_ENDS_SENTENCE)
        if line.y > last.y:  # above the line before it: the top of the next column
            return True
        pitch = self.pitch.get(line.page, 0.0)
        if last.size:  # a page of one-line paragraphs has their gap as its commonest
            pitch = min(pitch or LINE_PITCH * last.size, LINE_PITCH * last.size)
        return bool(pitch) and last.y - line.y > pitch * PARAGRAPH_GAP + 0.5


def _one_title(lines: list[Line], size: float) -> bool:
    """Whether the lines set in `size` are one title: on the first page, one after the
    other, at most TITLE_LINES of them (a long title wraps)."""
    at = [n for n, ln in enumerate(lines) if round(ln.size, 1) == size]
    return (
        len(at) <= TITLE_LINES
        and all(lines[n].page == 1 for n in at)
        and at == list(range(at[0], at[0] + len(at)))
    )


TITLE_LINES = 3


def _pitches(lines: list[Line]) -> dict[int, float]:
    """Each page's line pitch: its most common gap between a line and the next."""
    gaps: dict[int, Counter[float]] = {}
    for a, b in pairwise(ln for ln in lines if not ln.cells):
        if a.page == b.page and a.y > b.y:
            gaps.setdefault(a.page, Counter())[round(a.y - b.y, 0)] += 1
    return {page: c.most_common(1)[0][0] for page, c in gaps.items()}


def _body_size(lines: list[Line]) -> float:
    """The size most of a document's text is set in (0: pypdf gave none)."""
    sizes: Counter[float] = Counter()
    for ln in lines:  # by the characters set in each size: a table's too
        if ln.size:
            sizes[round(ln.size, 1)] += len(ln.text) + sum(len(c) for r in ln.cells for c in r)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _plausible(heading: re.Match[str]) -> bool:
    """A numbered heading: its title opens with a capital, its number not with a 0 (a
    line of a code listing, "0 with this …", is no chapter) and is no deeper than
    MAX_HEADING_DEPTH."""
    number = heading.group("number")
    return (
        heading.group("title")[0].isupper()
        and not number.startswith("0")
        and number.count(".") < MAX_HEADING_DEPTH
    )


def _reached(heading: Heading, line: Line) -> bool:
    if heading.page != line.page:
        return heading.page < line.page
    return heading.top is None or heading.top >= line.y


PDF = Magic(b"%PDF-", "a PDF document")
SHAPE = PlainShape("a PDF (.pdf)", (".pdf",), read, binary=True, magic=(PDF,))
