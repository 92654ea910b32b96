"""What every plain shape yields: typed rows, one a section, in file order; and the one
error a file that cannot be read at all raises."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from librarian.errors import InputError


class PlainInputError(InputError):
    """A plain input cannot be read as a table or document at all (not a row: the file)."""


@dataclass(frozen=True)
class PlainRow:
    """One section of a plain input as its shape read it. `line`: where it starts (a
    line, a paragraph, a page's line: what the rejection names); `id` and `text` None
    when the file has none (validation names what is missing); `where`: its place beyond
    its id, for people ("page 3, line 12", "paragraph 14", "table 2, row 3")."""

    line: int
    id: str | None
    text: str | None
    title: str | None = None
    url: str | None = None
    section_path: tuple[str, ...] = ()
    where: str | None = None
    note: str | None = None  # why it is no requirement (a note, scope, context), if it is not
    identity: str | None = None  # the last version's id it was matched to (None: its `id`)


@dataclass(frozen=True)
class Unreadable:
    """A line the shape could not read as a row: kept as its raw text and rejected with
    `why` (None: rejected as ingest rejects any bad line, e.g. not JSON)."""

    line: int
    raw: str
    why: str | None = None


@dataclass
class Split:
    """How a document shape split its file into items: what the run says after reading
    it (`segment.Segmenter` counts; a table shape has none)."""

    blocks: int = 0  # paragraphs, list items and table rows read
    by_id: int = 0
    by_label: int = 0  # by the document's own numbering, learnt from it (`labels`)
    by_wording: int = 0
    by_list: int = 0
    by_table: int = 0
    sections: int = 0  # text under a heading, no requirement in it: one item
    notes: int = 0
    skipped_worded: int = 0  # notes and context skipped that use a requirement's words
    requirement_sentences: int = 0
    numbering: str = ""  # the labels the document numbers its clauses with ("IV.a, IV.b, ...")
    tables: list[str] = field(default_factory=list)  # what each table was read as
    furniture: list[str] = field(default_factory=list)  # running headers and footers left out
    warnings: list[str] = field(default_factory=list)

    @property
    def items(self) -> int:
        return (
            self.by_id
            + self.by_label
            + self.by_wording
            + self.by_list
            + self.by_table
            + self.sections
        )

    def lines(self) -> list[str]:
        """A line of how, then a line a table and a warning."""
        ways = (
            (self.by_id, "by id"),
            (self.by_label, f"by the document's own numbering ({self.numbering})"),
            (self.by_wording, "by requirement wording"),
            (self.by_list, "as list items"),
            (self.by_table, "as table rows"),
            (self.sections, "as sections with no requirement of their own"),
        )
        how = ", ".join(f"{n} {what}" for n, what in ways if n) or "none"
        said = f"{self.items} items from {self.blocks} paragraphs: {how}"
        if self.notes:
            said += f"; {self.notes} skipped as notes, scope or context"
        furniture = (
            ["left out as page headers and footers: " + "; ".join(self.furniture)]
            if self.furniture
            else []
        )
        return [said, *self.tables, *furniture, *self.warnings, *self._doubts()]

    def _doubts(self) -> list[str]:
        doubts = []
        if self.skipped_worded:
            doubts.append(
                f"warning: {self.skipped_worded} of the {self.notes} skipped as notes, scope or "
                "context use a requirement's words (must, shall, required, ...): each is in "
                "skipped.jsonl with its first words and place; give one an id, or a paragraph "
                "of its own outside a note, to link it"
            )
        if self.requirement_sentences >= 6 and self.items * 2 < self.requirement_sentences:
            return [
                *doubts,
                f"warning: {self.requirement_sentences} sentences state requirements but "
                f"only {self.items} items were read: requirements may be glued together "
                "(give each an id, or a paragraph or list item of its own)",
            ]
        return doubts


Read = Callable[[Path], Iterator[PlainRow | Unreadable | Split]]

# The most rows one plain input may make (items, notes, sections and lines it could not
# read, together), whatever its shape: a plain input is read whole and every row kept for
# the run (~5 KB each), so a larger one is refused, not read into gigabytes. The largest
# catalogues of requirements hold a few thousand.
MAX_ITEMS = 20_000


@dataclass(frozen=True)
class Magic:
    """What a file is by its first bytes, whatever its name says (`sources.mislabelled`):
    shapes that share a format (Word and Excel: a zip package) share one."""

    head: bytes
    what: str  # "a PDF document"


@dataclass(frozen=True)
class PlainShape:
    """A kind of file the librarian reads whole, as sections of one document (`reader`
    yields its rows; `read` refuses a file past MAX_ITEMS, for every shape alike)."""

    name: str  # what the refusal of an unknown file lists
    suffixes: tuple[str, ...]
    reader: Read
    claims: Callable[[Path], bool] | None = None  # beyond the suffix (None: the suffix is enough)
    binary: bool = False  # a package or binary format: never sniffed as text
    magic: tuple[Magic, ...] = ()  # the first bytes of a file of this shape, if it has any

    def takes(self, path: Path) -> bool:
        if path.suffix.lower() not in self.suffixes:
            return False
        return self.claims(path) if self.claims is not None else True

    def read(self, path: Path) -> Iterator[PlainRow | Unreadable | Split]:
        """The file's rows, in order; PlainInputError past MAX_ITEMS of them."""
        rows, made = self.reader(path), 0
        try:
            for row in rows:
                made += not isinstance(row, Split)
                if made > MAX_ITEMS:
                    raise PlainInputError(
                        f"{path} makes more than {MAX_ITEMS:,} items (the most one plain "
                        "input is read whole with): split it into smaller files, or give "
                        "its rows as the knowledge queue's JSONL, which is streamed"
                    )
                yield row
        finally:
            close = getattr(rows, "close", None)
            if close is not None:
                close()  # a reader's own cleanup (pypdf's log handler) now, not at collection


@dataclass(frozen=True)
class StreamedShape:
    """A kind of file a run streams line by line, each line a row of its own (the queue's
    JSONL): any file with its suffix that no plain shape claims."""

    name: str
    suffixes: tuple[str, ...]
    binary: bool = False

    def takes(self, path: Path) -> bool:
        return path.suffix.lower() in self.suffixes


Shape = PlainShape | StreamedShape


def section_path_of(value: Any) -> tuple[str, ...]:
    """A section path given as a list, or as text: `Auth > Storage`, `Auth / Storage`."""
    if isinstance(value, list):
        return tuple(str(v) for v in value if str(v).strip())
    if isinstance(value, str) and value.strip():
        parts = re.split(r"\s*(?:>|\u203a|/)\s*", value)
        return tuple(part.strip() for part in parts if part.strip())
    return ()


def text_of(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PlainInputError(f"{path} is not UTF-8 (byte {exc.start})") from exc


# A requirement's own id at the start of a paragraph or line, in the shapes policies and
# standards write them: "SEC-01", "AC-2", "R1", "V2.1.1", "4.2.1", multi-part ones
# ("POL-AC-01", "POL-AC01", "POL.AC.01", "POL_AC_01", "ISP-3.2", "REQ-001", ISO's "A.5.1"),
# NIST's enhancements ("AC-2(1)") and sections ("§ 4.2"), bracketed or not ("[AC-01]"),
# set off by a space, a colon or a dash, en or em ("AC-01 - Users must …"). The text after
# it opens with a capital, a digit, a quote or a bracket ("ASN.1 definitions must …" is
# prose naming a standard, not requirement ASN.1); after an id with a hyphen or an
# underscore before its number ("AC-01 users must …") it may open in lower case. Each
# letter part is set off by a separator, so the pattern reads a line once (no part can
# be split two ways: no backtracking blow-up).
ID_SHAPE = (
    r"§\s?\d+(?:\.\d+)*"
    r"|[A-Z]+(?:[-._:][A-Z]+)*[-._:]?\d+(?:[.\-_]\d+)*(?:\(\d+\))?"
    r"|\d+(?:\.\d+)+"
)
_AFTER_ID = r"\]?[.:)]?\s+(?:[-\u2013\u2014:]\s+)?"
REQUIREMENT_ID = re.compile(
    rf"^\s*\[?(?P<id>{ID_SHAPE}){_AFTER_ID}(?P<text>[A-Z\d\"'(\u201c\u2018].*)$", re.S
)
_HYPHENATED_ID = re.compile(
    rf"^\s*\[?(?P<id>[A-Z]+(?:[-_][A-Z]+)*[-_]\d+(?:[.\-_]\d+)*(?:\(\d+\))?){_AFTER_ID}"
    r"(?P<text>[a-z].*)$",
    re.S,
)
# A table cell that is an id and nothing else.
ID_CELL = re.compile(rf"^\s*\[?(?:{ID_SHAPE})\]?[.:)]?\s*$")


def requirement_id(text: str, strict: bool = False) -> tuple[str, str] | None:
    """(the id, the requirement after it) of a text that opens with a requirement's id
    (`strict`: only before a capital, as in a document whose own numbering is known:
    "SHA-1 and DES are prohibited" is prose there)."""
    found = REQUIREMENT_ID.match(text) or (None if strict else _HYPHENATED_ID.match(text))
    return (found.group("id"), found.group("text")) if found else None


# A heading's own numbering ("5 ", "4.2.1 ", "A. ", "IV. "): the same chapter is numbered
# in one file and not in another (Word keeps "5 Logging", a PDF's outline says "Logging").
_HEADING_NUMBER = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?|[A-Z]\.|[IVXL]+\.)\s+(?=\S)")
# A heading that names a place, not a subject ("Part 3", "Section 2", "Chapter IV"): it
# says nothing the models can use, and prepended to a requirement it only adds noise.
_GENERIC_HEADING = re.compile(
    r"^(?:part|section|chapter|appendix|annex|article|clause|schedule|unit)\s+"
    r"(?:\d+(?:\.\d+)*|[ivxlc]+|[a-z])\.?$",
    re.IGNORECASE,
)


def heading_title(text: str) -> str:
    """A heading as context: without its numbering (a heading that is only a number keeps
    it)."""
    stripped = _HEADING_NUMBER.sub("", text, count=1).strip()
    return stripped or text.strip()


def title_of(path: tuple[str, ...]) -> str | None:
    """The heading a section is titled by: its nearest one that names a subject."""
    return next((h for h in reversed(path) if not _GENERIC_HEADING.match(h.strip())), None)


# What a requirement says, in any of the forms policies and standards use.
_REQUIREMENT_WORDS = re.compile(
    r"\b(must|shall|should|required?|requires|ensures?|verify|never|prohibited|may not|"
    r"is not permitted|are not permitted|mandatory)\b",
    re.IGNORECASE,
)
PREAMBLE_ID = "preamble"  # the id a document shape gives what comes before its first heading


def requirement_shaped(text: str) -> bool:
    """Whether a text reads as a requirement: it says must, shall, should, required, … A
    document's preamble ("This policy applies to …") does not."""
    return bool(_REQUIREMENT_WORDS.search(text))
