"""A PDF's page furniture: the running headers and footers a page repeats ("ISP-01
Information Security Policy, version 1.0 Page 3"), which are no text of the document."""

from __future__ import annotations

import re
from collections import Counter
from typing import Protocol, TypeVar

from librarian.pipeline.shapes.rows import requirement_id
from librarian.pipeline.shapes.segment import states_requirement

RUNNING = 0.6  # a first or last line on this share of pages (or more) is a running header
EDGE = 2  # the lines at a page's top, and at its foot, that may be running ones


class PageLine(Protocol):
    @property
    def text(self) -> str: ...

    @property
    def cells(self) -> tuple[tuple[str, ...], ...]: ...


L = TypeVar("L", bound=PageLine)


def without_running(pages: list[list[L]]) -> tuple[list[list[L]], list[str]]:
    """Pages without their running headers and footers, and what each was ("ISP-01
    Information Security Policy, version 1.0 Page #": digits as "#"): one of the EDGE
    lines at a page's top or foot that, digits aside ("Page 3 of 7"), recurs on most
    pages."""
    if len(pages) < 2:
        return pages, []
    shapes: Counter[str] = Counter()
    texts: Counter[str] = Counter()
    for page in pages:
        shapes.update({_shape(ln) for ln in _edges(page)})
        texts.update({ln.text for ln in _edges(page)})
    enough = max(2, RUNNING * len(pages))
    running = {s for s, n in shapes.items() if n >= enough}
    verbatim = {t for t, n in texts.items() if n >= enough}
    kept, found = [], Counter[str]()
    for page in pages:
        edges = {id(ln) for ln in _edges(page)}
        furniture = {id(ln) for ln in page if id(ln) in edges and _running(ln, running, verbatim)}
        found.update(_shape(ln) for ln in page if id(ln) in furniture)
        kept.append([ln for ln in page if id(ln) not in furniture])
    return kept, [f"'{shape}' ({n} pages)" for shape, n in found.items()]


def _edges(page: list[L]) -> list[L]:
    return [*page[:EDGE], *page[max(EDGE, len(page) - EDGE) :]]


# A page's number in its header or footer ("Page 3", "3 of 7", "3/7").
_PAGE_NUMBER = re.compile(r"\bpage\s+\d+|\b\d+\s*(?:of|/)\s*\d+\b", re.IGNORECASE)


def _running(line: PageLine, running: set[str], verbatim: set[str]) -> bool:
    """A running header or footer: a line that recurs (digits aside) and either says
    nothing a requirement says, or is the same line on most pages, or numbers the page
    ("ISP-01 Information Security Policy … Page 3" reads as an id, but no requirement
    recurs on every page; a document of one requirement a page has one first on each)."""
    if line.cells or _shape(line) not in running:
        return False
    quiet = requirement_id(line.text) is None and not states_requirement(line.text)
    return quiet or line.text in verbatim or bool(_PAGE_NUMBER.search(line.text))


def _shape(line: PageLine) -> str:
    return re.sub(r"\d+", "#", line.text.lower())
