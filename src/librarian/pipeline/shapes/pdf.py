"""A PDF, read with pypdf: text by line with its page and line, running headers and
footers removed, a table of contents skipped, sections from the outline (bookmarks) and
from the numbered headings ("4.2.1 Session management") it does not list. Within a
section, a line that opens with a requirement id starts a section of its own and the
lines after it continue it; text under a heading with no requirement in it is one
section, its id the heading's slug.

Refused in one line: a damaged file, one that needs a password to open, and one with no
text layer (a scan: nothing to read without OCR).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from librarian.pipeline.shapes.markdown import Slugs
from librarian.pipeline.shapes.rows import (
    REQUIREMENT_ID,
    PlainInputError,
    PlainRow,
    PlainShape,
    Unreadable,
)
from librarian.pipeline.shapes.rows import heading_title as titled
from librarian.pipeline.shapes.rows import title_of as subject_of

# A numbered heading when there is no outline: a short line, "4.2 Title words", no
# closing full stop (a requirement "4.2.1 Passwords must be hashed." is a sentence).
NUMBERED_HEADING = re.compile(r"^(?P<number>\d+(?:\.\d+)*)\.?\s+(?P<title>[^\W\d].{0,78}[^.:;,])$")
# A line of a table of contents: dot leaders, then a page number.
TABLE_OF_CONTENTS = re.compile(r"(?:\.\s*){4,}\d+\s*$")
SAME_LINE = 2.0  # points: text fragments this close in height are one line
RUNNING = 0.6  # a first or last line on this share of pages (or more) is a running header


@dataclass(frozen=True)
class Line:
    page: int  # from 1
    number: int  # its line on the page, from 1
    y: float  # from the bottom of the page, in points
    text: str


@dataclass(frozen=True)
class Heading:
    page: int
    top: float | None  # the outline destination's top; None: from the top of the page
    level: int
    title: str


def read(path: Path) -> Iterator[PlainRow | Unreadable]:
    with _pypdf_said() as said:
        reader = _open(path, said)
        pages: list[list[Line]] = []
        numbers, unread = _page_numbers(reader, said)  # unread: page -> why it is lost
        for n, page in zip(numbers, reader.pages, strict=False):
            lines, why = _lines(page, n, said)
            pages.append(lines)
            if why is not None:
                unread[n] = why
        if not any(pages) and not unread:
            raise PlainInputError(
                f"{path} has no text layer (a scanned document?): run OCR on it first, or "
                "give the text as CSV or Markdown"
            )
        lines = [line for page in _without_running(pages) for line in page]
        sections = _Sections(_outline(reader))
        yield from sections.rows(lines)
    # A page whose text could not be extracted is rejected with its number: never a
    # document read with sections silently missing.
    for offset, (n, why) in enumerate(sorted(unread.items()), start=1):
        yield Unreadable(sections.count + offset, f"page {n}", f"page {n} cannot be read: {why}")


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


def _lines(page: Any, number: int, said: list[str]) -> tuple[list[Line], str | None]:
    """The page's text lines, top to bottom, each with its height on the page; and why
    the page could not be read (None: it could), from pypdf's error or its log."""
    fragments: list[tuple[float, float, str]] = []
    before = len(said)

    def visit(text: str, cm: Sequence[float], tm: Sequence[float], *_: Any) -> None:
        if text.strip():
            x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
            y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
            fragments.append((y, x, text))

    try:
        page.extract_text(visitor_text=visit)
    except Exception as exc:  # pypdf raises many kinds on a broken content stream
        return [], f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    if len(said) > before and not fragments:
        return [], said[before][:200]
    if not fragments and (broken := _undecodable(page)) is not None:
        return [], broken
    rows: list[list[tuple[float, float, str]]] = []
    for fragment in sorted(fragments, key=lambda f: (-f[0], f[1])):
        if rows and abs(rows[-1][0][0] - fragment[0]) <= SAME_LINE:
            rows[-1].append(fragment)
        else:
            rows.append([fragment])
    out: list[Line] = []
    for row in rows:
        text = " ".join(" ".join(t for _, _, t in sorted(row, key=lambda f: f[1])).split())
        if text:
            out.append(Line(number, len(out) + 1, row[0][0], text))
    return out, None


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


def _without_running(pages: list[list[Line]]) -> list[list[Line]]:
    """Pages without their running header and footer: a first or last line that, digits
    aside ("Page 3 of 7"), recurs on most pages."""
    if len(pages) < 2:
        return pages
    tops = Counter(_shape(p[0]) for p in pages if p)
    bottoms = Counter(_shape(p[-1]) for p in pages if p)
    enough = max(2, RUNNING * len(pages))
    running = {s for s, n in (tops + bottoms).items() if n >= enough}
    kept = []
    for page in pages:
        edges = {id(page[0]), id(page[-1])} if page else set()
        kept.append([ln for ln in page if not (id(ln) in edges and _running(ln, running))])
    return kept


def _running(line: Line, running: set[str]) -> bool:
    """A running header or footer: never a line that carries a requirement id (a document
    of one requirement a page has such a line first on every page)."""
    return _shape(line) in running and REQUIREMENT_ID.match(line.text) is None


def _shape(line: Line) -> str:
    return re.sub(r"\d+", "#", line.text.lower())


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


@dataclass
class _Sections:
    outline: list[Heading]
    path: list[tuple[int, str]] = field(default_factory=list)
    slugs: Slugs = field(default_factory=Slugs)
    slug: str = "preamble"
    count: int = 0
    pending: tuple[Line, str, list[str]] | None = None  # first line, id, text
    body: list[Line] = field(default_factory=list)

    def rows(self, lines: list[Line]) -> Iterator[PlainRow]:
        upcoming = list(self.outline)
        for line in lines:
            while upcoming and _reached(upcoming[0], line):
                yield from self.flush()
                self.enter(upcoming.pop(0))
            if TABLE_OF_CONTENTS.search(line.text):
                continue  # "2.1 Naming . . . . . 3": the contents, not a section
            heading = NUMBERED_HEADING.match(line.text)
            titles = {line.text, heading.group("title")} if heading else {line.text}
            if self.outline and self.path and self.path[-1][1] in titles | {titled(line.text)}:
                continue  # the heading's own line, numbered or not
            if heading and _plausible(heading):
                # A numbered heading the outline does not list (an outline often holds
                # the chapters alone) is a heading too, at its number's depth.
                yield from self.flush()
                level = heading.group("number").count(".") + 1
                title = line.text if self.outline else heading.group("title")
                self.enter(Heading(line.page, line.y, level, title))
                continue
            yield from self.line(line)
        yield from self.flush()

    def enter(self, heading: Heading) -> None:
        title = titled(heading.title)
        if self.path and self.path[-1] == (heading.level, title):
            return  # a bookmark to the numbered heading just read: the same heading
        self.path = [*(p for p in self.path if p[0] < heading.level), (heading.level, title)]
        self.slug = self.slugs.of([t for _, t in self.path])

    def line(self, line: Line) -> Iterator[PlainRow]:
        found = REQUIREMENT_ID.match(line.text)
        if found:
            yield from self.flush()
            self.pending = (line, found.group("id"), [found.group("text")])
        elif self.pending is not None:
            self.pending[2].append(line.text)
        else:
            self.body.append(line)

    def flush(self) -> Iterator[PlainRow]:
        path = tuple(t for _, t in self.path)
        title = subject_of(path)
        if self.pending is not None:
            (first, row_id, parts), self.pending = self.pending, None
            yield self.row(first, row_id, " ".join(parts), path, title)
        if self.body:
            first, text = self.body[0], " ".join(ln.text for ln in self.body)
            self.body = []
            yield self.row(first, self.slug, text, path, title)

    def row(
        self, first: Line, row_id: str, text: str, path: tuple[str, ...], title: str | None
    ) -> PlainRow:
        self.count += 1
        where = f"page {first.page}, line {first.number}"
        return replace(PlainRow(self.count, row_id, text, title, None, path), where=where)


def _plausible(heading: re.Match[str]) -> bool:
    """A numbered heading: its title opens with a capital, its number not with a 0 (a
    line of a code listing, "0 with this …", is no chapter)."""
    return heading.group("title")[0].isupper() and not heading.group("number").startswith("0")


def _reached(heading: Heading, line: Line) -> bool:
    if heading.page != line.page:
        return heading.page < line.page
    return heading.top is None or heading.top >= line.y


SHAPE = PlainShape("a PDF (.pdf)", (".pdf",), read, binary=True)
