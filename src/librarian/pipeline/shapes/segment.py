"""Requirements found as people write them: one segmenter for every document shape. A
shape (Word, PDF, Markdown) turns its file into `Block`s in reading order (headings,
paragraphs, list items, tables); the segmenter turns blocks into items, so the same
document gives the same items whatever it was saved as.

An item starts at
- a requirement id of any common shape (`rows.requirement_id`: POL-AC-01, A.5.1, AC-2(1));
- a numbered list item, and a bulleted one that states a requirement;
- a paragraph that states one ("must", "shall", "is required", "may only", "is
  prohibited") without an id: its own item, never glued to the one before;
- a table row, when a column holds ids or requirement sentences.
What follows an item and states nothing of its own continues it (as do the items of a
list after "…:"). Notes, background, scope and definitions are skipped as
NOT_A_REQUIREMENT wherever they sit ("Note:" paragraphs, the text under a "Scope"
heading, the context before a section's first requirement), and counted; text under a
heading with no requirement in it stays one section, as before. `Split` says how the
document was split, and warns when it looks wrong.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Literal

from librarian.pipeline.shapes.clauses import (
    HEADING_LABEL,
    TITLE,
    Clauses,
    cited_by,
    ends_a_lead_in,
    extends,
    is_title,
    parent_of,
    runs_on,
    titles,
)
from librarian.pipeline.shapes.labels import Candidate, Numbering, candidate
from librarian.pipeline.shapes.markers import BULLET, NUMBER, step_id, typed_marker
from librarian.pipeline.shapes.notes import NOTE_HEADING, is_note
from librarian.pipeline.shapes.rows import (
    MAX_ITEMS,
    PREAMBLE_ID,
    PlainInputError,
    PlainRow,
    Split,
    requirement_id,
    requirement_shaped,
    title_of,
)
from librarian.pipeline.shapes.slugs import Slugs
from librarian.pipeline.shapes.table_reading import table_columns
from librarian.pipeline.shapes.wording import reads_as_requirement

BlockKind = Literal["heading", "paragraph", "numbered", "bullet", "table"]


@dataclass(frozen=True)
class Block:
    """A piece of a document as its shape read it: `where` names it for people
    ("paragraph 14", "page 3, line 12"); `level`: a heading's; `cells`: a table's rows."""

    kind: BlockKind
    text: str
    where: str
    level: int = 0
    cells: tuple[tuple[str, ...], ...] = ()
    label: str = ""  # a list item's number as Word shows it ("a."), not in its text


# A paragraph that states a requirement without an id: the words of policies, those of
# a house that writes its rules as "should" too ("Staff should lock their screens").
_STATES_REQUIREMENT = re.compile(
    r"\b(must|shall|should|ought to|needs? to|has to|have to|may only|can only|may not|"
    r"(?:is|are) (?:required|prohibited|forbidden|not permitted|not allowed|mandatory|"
    r"expected to|(?:not )?to be))\b",
    re.IGNORECASE,
)


def marked(block: Block) -> Block:
    """A paragraph that opens with a typed list marker, as the list item it is (the
    marker dropped, a step's kept as its label); any other block as it is."""
    found = typed_marker(block.text, block.label) if requirement_id(block.text) is None else None
    return block if found is None else replace(block, kind=found[0], text=found[1], label=found[2])


def starts_item(text: str, numbering: Numbering | None = None) -> bool:
    """Whether a line opens an item of its own: a label of the document's `numbering`,
    an id or a list marker (an id only before a capital where a numbering is known)."""
    known = numbering is not None and bool(numbering.schemes)
    if known and numbering is not None and numbering.label(text) is not None:
        return True
    found = requirement_id(text, strict=known)
    return found is not None or bool(BULLET.match(text) or NUMBER.match(text))


def states_requirement(text: str) -> bool:
    return bool(_STATES_REQUIREMENT.search(text))


# A line that gives an order ("Encrypt all backups at rest", "Do not share accounts"): a
# checklist's requirement, numbered like a heading ("1.1 …") but worded as an instruction.
# It opens with a verb controls open with, and two words or more follow; a verb that is as
# often a heading's noun ("Review process", "Change management", "Audit logging") gives an
# order only before a determiner ("Review all access rights"). Nor is a verb before "of",
# "and" or "for" one ("Use of cryptography").
_ORDER = re.compile(
    r"^(?:(?:allow|apply|approve|assign|authenticate|authori[sz]e|avoid|classify|confirm|"
    r"configure|conduct|define|delete|deny|deploy|destroy|disable|disallow|disconnect|"
    r"dispose|enable|encrypt|enforce|ensure|erase|escalate|establish|exclude|expire|follow|"
    r"grant|harden|hash|identify|implement|include|inform|install|invalidate|isolate|keep|"
    r"limit|maintain|mask|minimi[sz]e|notify|obtain|perform|permit|prevent|prohibit|provide|"
    r"purge|redact|reject|remove|require|restrict|retain|revoke|rotate|saniti[sz]e|"
    r"segregate|separate|store|terminate|train|uninstall|use|validate|verify|wipe|never|"
    r"always)\s+(?!(?:of|and|or|for|to|in|on|with|by|vs|versus)\s)\S+\s+\S"
    r"|(?:audit|back|block|change|check|document|label|lock|log|monitor|patch|protect|"
    r"record|report|review|run|scan|secure|set|sign|test|update|upgrade)\s+"
    r"(?:a|all|an|any|both|each|every|its|no|only|our|that|the|their|them|these|this|"
    r"those|up|your)\s+\S"
    r"|(?:do not|don't)\s+\S)",
    re.IGNORECASE,
)


def imperative(text: str) -> bool:
    """Whether a line opens with an order ("Encrypt all backups at rest")."""
    return bool(_ORDER.match(text.strip()))


@dataclass
class _Item:
    where: str
    id: str
    parts: list[str]
    kind: str  # what started it: id, wording, list, table

    @property
    def open_list(self) -> bool:
        """It introduces a list ("… the following:"): its items continue it."""
        return ends_a_lead_in(self.parts[-1])


@dataclass
class Segmenter:
    """Blocks in, rows out, in document order (each row's `line` its place). A section's
    text is one row named by its heading's slug; `numbered_body` (Markdown's way): split
    at `body_chars` and numbered like the section's other items (`slug-1`). `titled`:
    the text under a first heading that deeper ones follow is the document's
    introduction (Markdown's title is a heading; Word's and a PDF's are not).
    `typed_markers`: a paragraph opening "a." or "•" is a list item typed by hand (Word,
    PDF); Markdown's parser finds its own lists, and "a. b" there is a paragraph."""

    numbered_body: bool = False
    body_chars: int | None = None
    titled: bool = False  # the first heading may be the document's title (Markdown's "#")
    typed_markers: bool = True
    split: Split = field(default_factory=Split)
    headings: list[tuple[int, str]] = field(default_factory=list)
    slugs: Slugs = field(default_factory=lambda: Slugs())
    slug: str = PREAMBLE_ID
    count: int = 0  # rows so far: each row's `line`
    numbered: int = 0  # items numbered under the current heading
    noted: int = 0  # notes under it (numbered apart: a note leaves the items' ids alone)
    items_here: int = 0  # items under the current heading
    intro: bool = False  # the text under the document's title, its chapters after it
    pending: _Item | None = None
    body: list[tuple[str, str]] = field(default_factory=list)  # (where, text)
    tables: int = 0
    bare: Block | None = None  # a heading worded as a requirement, nothing under it yet
    # The document's own numbering (`labels`); None: learnt from its paragraphs at its
    # end, what is fed held until then.
    numbering: Numbering | None = None
    held: list[Block | PlainRow] = field(default_factory=list)
    clauses: Clauses = field(default_factory=Clauses)  # what a sub-clause is cited under
    lead: str | None = None  # a lead-in ("The agency shall:") read with each item it leads
    cited: str | None = None  # the current heading's own citation ("Art. 5"), if it has one
    steps: set[str] = field(default_factory=set)  # the steps' ids given ("Procedure B, Step 3")
    note_lead: bool = False  # the last paragraph was a note leading in ("Guidance:")
    section_line: Block | None = None  # a line that only names a section ("§ 4"), held

    def feed(self, block: Block) -> Iterator[PlainRow]:
        if self.numbering is None:
            self._hold(block)
            return
        yield from self._block(block)

    def row(self, row: PlainRow) -> Iterator[PlainRow]:
        """A row its shape read whole (a table with `id` and `text` columns), placed."""
        if self.numbering is None:
            self._hold(row)
            return
        yield from self._placed(row)

    def end(self) -> Iterator[PlainRow]:
        """The document read: its numbering learnt (unless its shape gave it), what was
        held segmented, its last section closed."""
        if self.numbering is None:
            held, self.held = self.held, []
            paragraphs = (b.text for b in held if isinstance(b, Block) and b.kind == "paragraph")
            self.numbering = Numbering.learnt(paragraphs)
            for part in held:
                yield from self._block(part) if isinstance(part, Block) else self._placed(part)
        if self.section_line is not None:
            yield from self._read(self.section_line)
            self.section_line = None
        yield from self._section_end()

    def _hold(self, part: Block | PlainRow) -> None:
        if len(self.held) >= MAX_HELD:
            raise PlainInputError(
                f"the document holds more than {MAX_HELD:,} paragraphs, list items and "
                "tables: split it into smaller files"
            )
        self.held.append(part)

    def _block(self, block: Block) -> Iterator[PlainRow]:
        named, self.section_line = self.section_line, None
        if named is not None and block.kind == "heading":  # "§ 4", then "Access rights"
            block = replace(block, text=f"{named.text} {block.text}")
        elif named is not None:
            yield from self._read(named)
        if block.kind == "paragraph" and HEADING_LABEL.fullmatch(block.text.strip()):
            self.section_line = block  # the heading's own line, its title on the next
            return
        yield from self._read(block)

    def _read(self, block: Block) -> Iterator[PlainRow]:
        if block.kind in ("heading", "table"):
            self.note_lead = False
        if block.kind == "heading":
            first = self.titled and self.slugs.seen_once(self.slug) and len(self.headings) == 1
            self.intro = first and block.level > self.headings[0][0]
            yield from self._section_end(bool(self.headings) and block.level > self.headings[-1][0])
            worded = states_requirement(block.text) or imperative(block.text)
            self.bare = block if worded else None
            self._enter(block.level, block.text)
            return
        self.bare = None
        if block.kind == "table":
            self.lead = None
            yield from self._table(block)
            return
        self.split.blocks += 1
        self.split.requirement_sentences += _requirement_sentences(block.text)
        label = self._label(block)
        led_by_note = self.note_lead and not label.lone if label is not None else False
        if label is not None and (self._noted(label) or led_by_note):  # "1.1 This Part ..."
            yield from self._close_item()
            yield self._note(block.where, block.text)
            if ends_a_lead_in(label.text):  # "4. Definitions. ... apply:", then "4.a"
                self.clauses.notes.add(label.label)
            elif led_by_note:  # "Definitions ... apply:", then "4.a", "4.b": all "4"'s
                self.clauses.notes.add(parent_of(label.label))
            self.note_lead = False
            return
        if label is not None:
            yield from self._labelled(block.where, label)
            return
        typed = self.typed_markers and block.kind == "paragraph"
        yield from self._text(marked(block) if typed else block)

    def _noted(self, label: Candidate) -> bool:
        """A labelled clause that is a note: under a heading that explains the document, in
        a note's words, or under a labelled note that leads into it."""
        under = self.clauses.in_a_note(label.label)
        return self._note_section or is_note(label.text) or under

    def _label(self, block: Block) -> Candidate | None:
        """The document's own label the paragraph opens with: a clause's ("IV.a"), or a
        sub-clause's ("(b)") under a labelled clause; None: none (a lone "(b)" with no
        clause above it is a list's marker, as any)."""
        typed = block.kind == "paragraph" and self.numbering is not None
        if not typed and not (block.kind == "numbered" and block.label):
            return None
        # Word's own "a." under clause 6.2 is read as if typed before its text.
        text = block.text if typed else f"{block.label} {block.text}"
        found = self.numbering.label(text) if typed and self.numbering is not None else None
        if found is None:
            lone = candidate(text)  # a short list of sub-clauses counts too: (a), (b)
            led = self._leads
            found = (
                lone if lone is not None and lone.lone and self.clauses.fits(lone, led) else None
            )
        if found is None or (found.lone and self.clauses.parent is None):
            return None
        return found

    def _labelled(self, where: str, label: Candidate) -> Iterator[PlainRow]:
        """A clause the document labels: its own item, whatever its wording, named by its
        label (a sub-clause under its clause's, "3.2(a)"). A clause that only leads into
        its sub-clauses ("3.2 The agency shall:") is read with each, no item of its own, and
        one that only titles them ("A.12.3.1 Information backup" over "A.12.3.1.1") is a
        note."""
        pending = self.pending
        if pending is not None and titles(pending.id, " ".join(pending.parts), label.label):
            self.pending = None
            yield self._note(pending.where, " ".join(pending.parts), TITLE)
        placed = self.clauses.enter(label, self._leads) if label.lone else None
        if placed is None:
            self.lead, pending = None, self.pending
            if pending is not None and pending.open_list and extends(label.label, pending.id):
                self.clauses.outer[pending.id], self.pending = " ".join(pending.parts), None
            lead = self.clauses.outer_lead(label.label)
            text = f"{lead} {label.text}" if lead else label.text
            yield from self._open(where, label.label, text, "label")
            self.clauses.under(label.label)
            return
        above, cite = placed
        if (
            pending is not None
            and pending.id == above
            and (pending.open_list or runs_on(pending.parts[-1]))
        ):
            self.clauses.leads[above], self.pending = " ".join(pending.parts), None
        lead = self.clauses.leads.get(above, self.lead if above == self.clauses.parent else None)
        yield from self._open(where, cite, f"{lead} {label.text}" if lead else label.text, "label")

    def _say(self, label: str) -> None:
        """The first labels read, for the "read:" line ("IV.a, IV.b, IV.c, …")."""
        said = self.split.numbering
        if not said.endswith("…"):
            self.split.numbering = (
                label if not said else f"{said}, {label if said.count(',') < 2 else '…'}"
            )

    def _placed(self, row: PlainRow) -> Iterator[PlainRow]:
        yield from self._close_item()
        yield from self._close_body()
        self.bare = self.lead = None
        self.split.blocks += 1
        self.split.by_table += 1
        self.items_here += 1
        self.count += 1
        path = row.section_path or self.path
        yield replace(row, line=self.count, section_path=path, title=row.title or title_of(path))

    def _section_end(self, opens_below: bool = False) -> Iterator[PlainRow]:
        """The section read so far, closed (at a heading, and at the document's end). A
        heading worded as a requirement ("1.1 Encrypt all backups at rest", set bold in a
        PDF) with nothing under it makes no item: never without a word."""
        yield from self._close_item()
        # A policy's text over its sub-sections introduces them (a Markdown page's is its own).
        yield from self._close_body(before_item=opens_below and not self.numbered_body)
        self.intro = False
        if self.bare is not None:
            self.split.warnings.append(
                f"warning: {self.bare.where}: the heading '{self.bare.text}' reads as a "
                "requirement, but no text is under it, so no item was read for it (set it as "
                "text, or give it an id)"
            )
            self.bare = None

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(h for _, h in self.headings)

    def _text(self, block: Block) -> Iterator[PlainRow]:
        known = self.numbering is not None and bool(self.numbering.schemes)
        text, found = block.text, requirement_id(block.text, strict=known)
        if found and self._note_section and not requirement_shaped(found[1]):
            found = None  # a document its references name ("IS-POL-01 Information Security …")
        listed = block.kind in ("numbered", "bullet")
        if not listed:
            self.lead = None
        # The paragraph a note's lead-in introduces is that note's ("Guidance:" then it).
        # ... and so is the list it introduces ("REFERENCES:" then "(a) DFARS ...").
        led_by_note, self.note_lead = self.note_lead, False
        if not found and (is_note(text) or self._note_section or led_by_note):
            yield from self._close_item()
            yield self._note(block.where, text)
            self.note_lead = (is_note(text) and ends_a_lead_in(text)) or (led_by_note and listed)
        elif found:
            yield from self._open(block.where, found[0], found[1], "id")
            self.clauses.under(found[0])
        elif listed and (self.lead is not None or self._leads):
            yield from self._led(block)
        elif self.pending is not None and (self.pending.open_list or self._titled(block)):
            self.pending.parts.append(text)
        elif block.kind == "numbered" or self._worded(text) or _a_sentence(text, listed):
            kind = "wording" if block.kind == "paragraph" else "list"
            step = step_id(block.label, self.path, self.slug)
            step = "" if step in self.steps else step  # a step named twice: counted, not lost
            self.steps.add(step)  # ("" with them: a counted item's, never looked up)
            yield from self._open(block.where, step, text, kind)
        elif self.pending is not None and not _leads_in(text, block.kind):
            self.pending.parts.append(text)
        else:
            yield from self._close_item()
            self.body.append((block.where, text))
            self.lead = text if _leads_in(text, block.kind) else None

    def _worded(self, text: str) -> bool:
        """A paragraph whose wording says it requires something: a requirement's words,
        or, in a sentence (a capital to a full stop: no code, no fragment), what the
        wording classifier reads as one (a plain order, a control stated as fact)."""
        return states_requirement(text) or (_prose(text) and reads_as_requirement(text))

    def _titled(self, block: Block) -> bool:
        """The item read last is an id or a label with a title and no text ("SEC-ACC-001 |
        Access | High", a register's line over its requirement): this paragraph is its
        text."""
        item = self.pending
        return (
            item is not None
            and block.kind == "paragraph"
            and item.kind in ("id", "label")
            and len(item.parts) == 1
            and is_title(item.parts[0])
        )

    @property
    def _leads(self) -> bool:
        """The item read last leads into a list ("… the following:")."""
        return self.pending is not None and self.pending.open_list

    def _led(self, block: Block) -> Iterator[PlainRow]:
        """A list item under a lead-in ("Dependencies must meet these rules:" then
        "pinned to an exact version"): its own item, read with the lead-in, which is no
        item of its own; every item of the list is one requirement."""
        lead = self.pending
        if self.lead is None and lead is not None:
            self.lead, self.pending = " ".join(lead.parts), None
            self.items_here -= 1
            if lead.id == self._auto_id(self.numbered):
                self.numbered -= 1  # the number it took is its first item's
        yield from self._open(block.where, "", f"{self.lead} {block.text}", "list")

    def _open(self, where: str, row_id: str, text: str, kind: str) -> Iterator[PlainRow]:
        yield from self._close_item()
        yield from self._close_body(before_item=True)
        self.items_here += 1
        self.pending = _Item(where, row_id or self._next_id(), [text], kind)

    def _next_id(self) -> str:
        self.numbered += 1
        return self._auto_id(self.numbered)

    def _auto_id(self, n: int) -> str:
        """The id of the `n`th item with none of its own under a heading: under one that
        cites its article ("Art. 5 Authentication"), the article's for the first ("Art.
        5"), else the heading's slug and its number."""
        if self.cited is not None:
            return self.cited if n == 1 else f"{self.cited}-{n}"
        return f"{self.slug}-{n}"

    def _close_item(self) -> Iterator[PlainRow]:
        if self.pending is None:
            return
        item, self.pending = self.pending, None
        name = _COUNTED[item.kind]
        setattr(self.split, name, getattr(self.split, name) + 1)
        if item.kind == "label":
            self._say(item.id)  # an item's, not a lead-in's read with the clauses under it
        yield self._row(item.where, item.id, " ".join(item.parts))

    def _close_body(self, before_item: bool = False) -> Iterator[PlainRow]:
        """A section's text outside its requirements: the preamble, the introduction under
        the title and the context beside requirements are skipped unless they read as a
        requirement; any other is the section's own item."""
        if not self.body:
            return
        body, self.body = self.body, []
        why = self._aside(before_item)
        if why is not None and not requirement_shaped(" ".join(t for _, t in body)):
            for where, part in body:
                yield self._note(where, part, why)
            return
        for where, chunk in self._body_chunks(body):
            self.split.sections += 1
            self.items_here += 1
            own = self.cited or self.slug  # "Art. 12", cited by its heading, or the slug
            yield self._row(where, self._next_id() if self.numbered_body else own, chunk)

    def _aside(self, before_item: bool) -> str | None:
        """Why a section's text would be no item: None, it is the section's item."""
        if self.slug == PREAMBLE_ID and not self.headings:
            return PREAMBLE
        if self._note_section:  # a revision history's table, read as text
            return f"under '{self.headings[-1][1]}', which explains the document"
        if self.intro:
            return "the document's introduction, under its title"
        if before_item or self.items_here:
            return "context beside this section's requirements"
        return None

    def _body_chunks(self, body: list[tuple[str, str]]) -> Iterator[tuple[str, str]]:
        if not self.numbered_body:
            yield body[0][0], " ".join(t for _, t in body)
            return
        where, current = body[0][0], list[str]()
        for part_where, part in body:
            size = sum(len(c) for c in current) + len(part)
            if current and self.body_chars is not None and size > self.body_chars:
                yield where, "\n\n".join(current)
                where, current = part_where, []
            current.append(part)
        yield where, "\n\n".join(current)

    def _note(self, where: str, text: str, why: str | None = None) -> PlainRow:
        self.split.notes += 1
        self.noted += 1
        if states_requirement(text) or requirement_shaped(text):
            self.split.skipped_worded += 1
        if why is None:
            why = (
                f"under '{self.headings[-1][1]}', which explains the document"
                if self._note_section
                else "a note, background or scope paragraph"
            )
        row = self._row(where, f"{self.slug}-note-{self.noted}", text)
        said = why if why == PREAMBLE else f"{why}: no requirement to link (an id links it)"
        return replace(row, note=said)

    def _row(self, where: str, row_id: str, text: str) -> PlainRow:
        self.count += 1
        path = self.path
        return PlainRow(self.count, row_id, text, title_of(path), None, path, where=where)

    def _enter(self, level: int, title: str) -> None:
        self.headings = [*(h for h in self.headings if h[0] < level), (level, title)]
        self.slug = self.slugs.of(list(self.path))
        self.numbered = self.items_here = self.noted = 0
        self.lead = None
        self.cited = cited_by(title)  # "Art. 4 Access": its paragraphs are "Art. 4(1)"
        self.clauses.under(self.cited, section=True)

    @property
    def _note_section(self) -> bool:
        return bool(self.headings) and bool(NOTE_HEADING.match(self.headings[-1][1].strip()))

    def _table(self, block: Block) -> Iterator[PlainRow]:
        yield from self._close_item()
        self.tables += 1
        rows = [r for r in block.cells if any(c.strip() for c in r)]
        reading = table_columns(rows)
        name = f"table {self.tables} ({block.where})"
        if reading is None:
            self.split.warnings.append(
                f"warning: {name} has no column of requirement ids or requirement sentences: "
                "read as text of its section"
            )
            for n, cells in enumerate(rows, start=1):
                self.split.blocks += 1
                self.body.append((f"{block.where}, row {n}", " | ".join(c for c in cells if c)))
            return
        self.split.tables.append(f"{name}: a row per requirement, {reading.said}")
        for n, cells in enumerate(rows[reading.first :], start=reading.first + 1):
            self.split.blocks += 1
            text = cells[reading.text].strip() if reading.text < len(cells) else ""
            cell_id = cells[reading.ids].strip() if reading.ids is not None else ""
            if text:
                where = f"{block.where}, row {n}"
                yield from self._open(where, cell_id.rstrip(".:)"), text, "table")
        yield from self._close_item()


_COUNTED = {
    "id": "by_id",
    "label": "by_label",
    "wording": "by_wording",
    "list": "by_list",
    "table": "by_table",
}


def _prose(text: str) -> bool:
    """A sentence or more: a capital first, a full stop (or "!", ";") last."""
    stripped = text.strip()
    return stripped[:1].isupper() and stripped[-1:] in (".", "!", ";")


def _a_sentence(text: str, listed: bool) -> bool:
    """A list item that is a sentence of its own (a capital, a full stop: a checklist's
    "☐ Old computers are wiped before disposal."), not a fragment that goes on from the
    item before ("• pinned to an exact version")."""
    stripped = text.strip()
    return listed and stripped[:1].isupper() and stripped.endswith(".")


def _leads_in(text: str, kind: BlockKind) -> bool:
    """A paragraph that introduces the list after it ("Company laptops:")."""
    return kind == "paragraph" and ends_a_lead_in(text)


# The most blocks a document is held for while its numbering is learnt (each becomes at
# most one row, and MAX_ITEMS rows are refused anyway; notes and continuations are more).
MAX_HELD = 10 * MAX_ITEMS
PREAMBLE = (
    "the document's preamble: no requirement id and no requirement's words (must, shall, "
    "should, required, ...); kept out of the items (give it an id, or a heading of a rule, "
    "to link it)"
)


def _requirement_sentences(text: str) -> int:
    return sum(1 for s in re.split(r"(?<=[.;!?])\s+", text) if states_requirement(s))
