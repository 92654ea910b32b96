"""Word's list numbering, as Word shows it: a numbered paragraph's number is not in its
text but drawn from the numbering part (numbering.xml), so "1.2 Users must …" in the PDF
Word saves is "Users must …" in the .docx. A multi-part number ("1.2", "3.1.4") is a
requirement's id in both; a single one ("1.", "a)") numbers a list item.

Held to what Word itself allows, so a hostile file costs no more than a real one: list
levels 0-8 (a paragraph's level past 8 is read as 8), start values up to 32767 (larger
ones read as 32767), a level's pattern its first 255 characters; numerals are built
digit by digit, never counted out."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MULTI_PART = re.compile(r"\d+(?:\.\d+)+")
MAX_LEVEL = 8  # Word's list levels are 0-8
MAX_START = 32767  # the largest start value Word accepts
MAX_PATTERN_CHARS = 255  # a level's text ("%1.%2."): Word's are a few characters
_ROMAN = (
    (1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
    (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"),
)  # fmt: skip


@dataclass(frozen=True)
class Level:
    fmt: str  # decimal, bullet, lowerLetter, upperRoman, ...
    text: str  # the label's pattern: "%1.%2."
    start: int = 1


@dataclass
class Numbering:
    """Each list's levels (a list, `w:num`, shares those of its abstract definition), and
    the count each list has reached in the document so far."""

    abstract: dict[str, dict[int, Level]] = field(default_factory=dict)  # id -> its levels
    lists: dict[str, str] = field(default_factory=dict)  # numId -> its abstract definition
    counts: dict[str, list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, definitions: Iterable[Any]) -> Numbering:
        """From the numbering part's top elements (`w:abstractNum`, `w:num`), read once each."""
        numbering = cls()
        for element in definitions:
            if element.tag == f"{W}abstractNum":
                numbering.abstract[element.get(f"{W}abstractNumId", "")] = _levels(element)
            elif element.tag == f"{W}num":
                ref = element.find(f"{W}abstractNumId")
                if ref is not None:
                    numbering.lists[element.get(f"{W}numId", "")] = ref.get(f"{W}val", "")
        return numbering

    def level(self, num_id: str, depth: int) -> Level | None:
        return self.abstract.get(self.lists.get(num_id, ""), {}).get(depth)

    def label(self, num_id: str, ilvl: str) -> tuple[bool, str]:
        """(a bullet?, the label Word shows) of the next paragraph of list `num_id` at
        level `ilvl`, counted."""
        depth = list_level(ilvl)
        level = self.level(num_id, depth) or Level("decimal", "%1.")
        if level.fmt in ("bullet", "none"):
            return True, ""
        counts = self.counts.setdefault(num_id, [])
        counts.extend([0] * (depth + 1 - len(counts)))
        del counts[depth + 1 :]
        counts[depth] += 1
        shown = level.text
        for k, count in enumerate(counts, start=1):
            lvl = self.level(num_id, k - 1) or Level("decimal", "")
            shown = shown.replace(f"%{k}", _formatted(count + lvl.start - 1, lvl.fmt))
        return False, shown.strip()


def list_level(ilvl: str | None) -> int:
    """A paragraph's list level as Word reads it: 0-8 (past 8, 8)."""
    return min(int(ilvl), MAX_LEVEL) if ilvl is not None and ilvl.isdigit() else 0


def _levels(definition: Any) -> dict[int, Level]:
    out = {}
    for lvl in definition.iterchildren(f"{W}lvl"):
        ilvl = lvl.get(f"{W}ilvl", "")
        if not ilvl.isdigit() or int(ilvl) > MAX_LEVEL:
            continue  # a level Word never shows
        fmt, text, start = lvl.find(f"{W}numFmt"), lvl.find(f"{W}lvlText"), lvl.find(f"{W}start")
        value = start.get(f"{W}val", "") if start is not None else ""
        out[int(ilvl)] = Level(
            fmt.get(f"{W}val") if fmt is not None else "decimal",
            (text.get(f"{W}val") or "")[:MAX_PATTERN_CHARS] if text is not None else "",
            min(int(value), MAX_START) if value.isdigit() else 1,
        )
    return out


def _formatted(n: int, fmt: str) -> str:
    if fmt in ("lowerLetter", "upperLetter"):
        letter = chr(ord("a") + (n - 1) % 26)
        return letter.upper() if fmt == "upperLetter" else letter
    if fmt in ("lowerRoman", "upperRoman"):
        roman = roman_numeral(n)
        return roman.upper() if fmt == "upperRoman" else roman
    return str(n)


def roman_numeral(n: int) -> str:
    """n in lower-case Roman numerals, each value's digits repeated in one step (the
    thousands of a large n as one run of m's)."""
    digits = []
    for value, numeral in _ROMAN:
        times, n = divmod(n, value)
        digits.append(numeral * times)
    return "".join(digits)


def numbered_id(label: str) -> str | None:
    """The id a multi-part list number gives its paragraph ("1.2." -> "1.2"), or None."""
    bare = label.rstrip(".)")
    return bare if MULTI_PART.fullmatch(bare) else None
