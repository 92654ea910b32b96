"""Where a labelled sub-clause sits: under which clause, how deep, and what it is cited as.

A city's code nests its sub-clauses ("Sec. 4" > "(d)" > "(2)" > "(i)", cited "4(d)(2)(i)");
a government template goes one level deep ("3.2(a)"). Which level a lone label opens is
read from the labels themselves: one that goes on from an open level's last label ("(3)"
after "(2)") returns to that level; one that starts a counter no open level uses ("(i)"
under "(2)") opens a level below. A lone "(i)" after "(h)" goes on from the letters,
before it could start the Roman numerals, unless the clause before it leads in ("(2) not
use an administrative account to—"): then it opens the level below. A clause that leads
into its sub-clauses ("(d) Each department head shall—") is read with each of them, not
as an item of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from librarian.pipeline.shapes.labels import Candidate, candidate

# A heading that names its article or section ("Art. 4 Access management", "Section 3 -
# Identification"): its numbered paragraphs are cited under it ("Art. 4(1)").
HEADING_LABEL = re.compile(
    r"^(?P<label>(?:art\.|article|section|sec\.|clause|§)\s?\d+[a-z]?)\b", re.IGNORECASE
)

# How a lead-in ends: "... the following:", and the legal dash ("... shall—").
LEAD_IN_ENDS = (":", "\u2014")
# A lone label goes on from its level's last one when it steps up by at most this (a
# sub-clause repealed or a label mistyped leaves the rest in place).
MAX_STEP = 3


def cited_by(title: str) -> str | None:
    """What the text under a heading is cited as: the article or section the heading
    names ("Art. 4 Access management": "Art. 4"), or the clause it labels with two
    counters or more ("A.5.1.1 Policies for information security": "A.5.1.1", an annex's
    control, whose text is the paragraph under it); None: the heading's slug names it. A
    lone "3. Passwords" is a chapter's number, not a citation."""
    named = HEADING_LABEL.match(title)
    if named is not None:
        return named.group("label")
    label = candidate(title)
    return label.label if label is not None and len(label.values[0]) >= 2 else None


TITLE = "a clause's title over its sub-clauses, no text of its own"
# A title: a few words, no sentence's end (a control's "Information backup").
TITLE_WORDS = 8
SMALL_WORDS = frozenset(("a", "an", "and", "for", "in", "of", "on", "or", "the", "to", "with"))


def titles(clause: str, text: str, next_label: str) -> bool:
    """Whether a labelled clause only titles the sub-clauses after it: the next label goes
    on from its own ("A.12.3.1" then "A.12.3.1.1") and its text is a title, no sentence
    (no full stop, a few words)."""
    return extends(next_label, clause) and is_title(text)


def is_title(text: str) -> bool:
    """A few words and no sentence's end: a title or a register line's fields ("Access |
    High"), not a clause's text; or a caption, its words capitalised, that ends in a full
    stop ("Incident Reporting.")."""
    words = text.split()
    if not 0 < len(words) <= TITLE_WORDS:
        return False
    if text.rstrip().endswith("."):
        return all(w[:1].isupper() or w in SMALL_WORDS for w in words)
    return not text.rstrip().endswith((";", ":", "!", "?", "\u2014"))


def extends(label: str, clause: str) -> bool:
    """Whether `label` is a clause under `clause` ("A.12.3.1.1" under "A.12.3.1", "6.a.(1)"
    under "6.a"), not a sibling that starts alike ("A.12.31")."""
    rest = label[len(clause) :]
    return label.startswith(clause) and rest[:1] in (".", "-", "/", "(") and len(rest) > 1


def parent_of(label: str) -> str:
    """The clause a label is under, its last counter dropped ("4.a": "4", "6.a.(1)":
    "6.a"); the label itself when it has one counter."""
    return re.sub(r"[.\-_/]?\(?[A-Za-z0-9]+\)?[\u00b0\u00ba]?$", "", label) or label


def ends_a_lead_in(text: str) -> bool:
    """A text that introduces what follows it ("Passwords shall—", "as follows:")."""
    return text.rstrip().endswith(LEAD_IN_ENDS)


def runs_on(text: str) -> bool:
    """A clause whose sentence its sub-clauses finish ("(1) Passwords must" over "1.
    consist of at least 12 characters,"): it stops on a word, not a sentence's end."""
    return text.rstrip()[-1:].isalpha()


@dataclass(frozen=True)
class Level:
    """One open level of sub-clauses: its counter's kind ("a", "n", "r") and its last
    label."""

    scheme: str
    value: int
    label: str


@dataclass
class Clauses:
    """The labelled clause (or cited heading) the text is under, the sub-clause levels
    open below it, and the lead-ins their sub-clauses are read with (by the cite of the
    clause that leads in)."""

    parent: str | None = None
    levels: list[Level] = field(default_factory=list)
    leads: dict[str, str] = field(default_factory=dict)
    # A labelled clause that leads into the clauses its label starts ("6.a. The CSO will:"
    # into "6.a.(1)", "6.a.(2)"), by its label: its text, read with each of them.
    outer: dict[str, str] = field(default_factory=dict)
    notes: set[str] = field(default_factory=set)  # labelled notes that lead in ("4. Definitions")

    def under(self, parent: str | None, section: bool = False) -> None:
        """A new clause, or (`section`) a heading, which cites its article or not (None)."""
        self.parent, self.levels, self.leads = parent, [], {}
        if section:
            self.outer, self.notes = {}, set()

    def outer_lead(self, label: str) -> str | None:
        """The lead-in of the nearest clause whose label `label` extends, if any. The
        clauses it does not extend are closed and forgotten (what is kept is the chain
        above one clause, a few labels however long the document)."""
        self.outer = {k: v for k, v in self.outer.items() if extends(label, k)}
        return self.outer[max(self.outer, key=len)] if self.outer else None

    def in_a_note(self, label: str) -> bool:
        """Whether `label` is under a labelled note that leads in ("4.a" under "4.
        Definitions ... apply:"); the notes it is not under are closed and forgotten."""
        self.notes = {note for note in self.notes if extends(label, note)}
        return bool(self.notes)

    def fits(self, label: Candidate, led: bool = False) -> bool:
        """Whether a lone label goes on from an open level or starts one below them
        (`led`: the clause before it leads into it)."""
        return self.parent is not None and self._fit(label, led) is not None

    def enter(self, label: Candidate, led: bool = False) -> tuple[str, str] | None:
        """A lone label's place, taken: the cite of the clause it is under and its own
        ("4(d)(2)", "4(d)(2)(i)"); None: it fits no level, so it is a clause of its own
        (a directive's "11." after "10.b.(2)": a numbering learnt from the whole document
        says it is a label, and it is no sub-clause of the one before)."""
        fit = self._fit(label, led) if self.parent is not None else None
        if fit is None:
            return None
        depth, scheme, value = fit
        self.levels[depth:] = [Level(scheme, value, label.label)]
        above = self.cite(depth)
        return above, f"{above}({label.label})"

    def cite(self, depth: int) -> str:
        """The cite of the clause at `depth` (0: the parent itself)."""
        return f"{self.parent}" + "".join(f"({lvl.label})" for lvl in self.levels[:depth])

    def _fit(self, label: Candidate, led: bool) -> tuple[int, str, int] | None:
        readings = [
            (s + label.form, v[0]) for s, v in zip(label.schemes, label.values, strict=True)
        ]
        used = {lvl.scheme for lvl in self.levels}
        below = next(
            ((len(self.levels), s, v) for s, v in readings if v == 1 and s not in used), None
        )
        if led and below is not None:
            return below
        for depth in range(len(self.levels) - 1, -1, -1):
            level = self.levels[depth]
            for scheme, value in readings:
                if scheme == level.scheme and 1 <= value - level.value <= MAX_STEP:
                    return depth, scheme, value
        return below
