"""Word's list numbering, as Word shows it: a numbered paragraph's number is not in its
text but drawn from the numbering part (numbering.xml), so "1.2 Users must …" in the PDF
Word saves is "Users must …" in the .docx. A multi-part number ("1.2", "3.1.4") is a
requirement's id in both; a single one ("1.", "a)") numbers a list item."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MULTI_PART = re.compile(r"\d+(?:\.\d+)+")
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
    """Each list's levels, and the count each has reached in the document so far."""

    levels: dict[tuple[str, str], Level] = field(default_factory=dict)
    counts: dict[str, list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, document: Any) -> Numbering:
        try:
            numbering = document.part.numbering_part.element
        except (KeyError, NotImplementedError, AttributeError):
            return cls()
        abstract = {
            definition.get(f"{W}abstractNumId"): _levels(definition)
            for definition in numbering.iter(f"{W}abstractNum")
        }
        levels: dict[tuple[str, str], Level] = {}
        for num in numbering.iter(f"{W}num"):
            ref = num.find(f"{W}abstractNumId")
            for ilvl, level in abstract.get(
                ref.get(f"{W}val") if ref is not None else "", {}
            ).items():
                levels[(num.get(f"{W}numId"), ilvl)] = level
        return cls(levels)

    def label(self, num_id: str, ilvl: str) -> tuple[bool, str]:
        """(a bullet?, the label Word shows) of the next paragraph of list `num_id` at
        level `ilvl`, counted."""
        level = self.levels.get((num_id, ilvl), Level("decimal", "%1."))
        if level.fmt in ("bullet", "none"):
            return True, ""
        depth = int(ilvl) if ilvl.isdigit() else 0
        counts = self.counts.setdefault(num_id, [])
        counts.extend([0] * (depth + 1 - len(counts)))
        del counts[depth + 1 :]
        counts[depth] += 1
        shown = level.text
        for k, count in enumerate(counts, start=1):
            lvl = self.levels.get((num_id, str(k - 1)), Level("decimal", ""))
            shown = shown.replace(f"%{k}", _formatted(count + lvl.start - 1, lvl.fmt))
        return False, shown.strip()


def _levels(definition: Any) -> dict[str, Level]:
    out = {}
    for lvl in definition.iter(f"{W}lvl"):
        fmt, text, start = lvl.find(f"{W}numFmt"), lvl.find(f"{W}lvlText"), lvl.find(f"{W}start")
        out[lvl.get(f"{W}ilvl")] = Level(
            fmt.get(f"{W}val") if fmt is not None else "decimal",
            text.get(f"{W}val") if text is not None else "",
            int(start.get(f"{W}val"))
            if start is not None and start.get(f"{W}val", "").isdigit()
            else 1,
        )
    return out


def _formatted(n: int, fmt: str) -> str:
    if fmt in ("lowerLetter", "upperLetter"):
        letter = chr(ord("a") + (n - 1) % 26)
        return letter.upper() if fmt == "upperLetter" else letter
    if fmt in ("lowerRoman", "upperRoman"):
        roman, left = "", n
        for value, digits in _ROMAN:
            while left >= value:
                roman, left = roman + digits, left - value
        return roman.upper() if fmt == "upperRoman" else roman
    return str(n)


def numbered_id(label: str) -> str | None:
    """The id a multi-part list number gives its paragraph ("1.2." -> "1.2"), or None."""
    bare = label.rstrip(".)")
    return bare if MULTI_PART.fullmatch(bare) else None
