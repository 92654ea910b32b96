"""A document's own numbering, learnt from the document.

People number their clauses in every way ("IV.a", "3.2", "(b)", "R-07", "Art. 5",
"POL-AC-01"), and a ninth house style is always one rule away. So the scheme is not
listed here: it is read off the document. Any short token that opens a paragraph and is
made of counters (Arabic numbers, Roman numerals, letters) and fixed words, joined by
separators, is a candidate label; its *scheme* is its shape with the counters' values
left out ("IV.a" and "V.c" share "R.a"). A scheme is the document's numbering when its
labels, in reading order, count up as a person numbers (IV.a, IV.b, ..., V.a: the last
counter steps by one, or an earlier one does and the later ones start again). "SHA-1",
"e.g." or a footer's "ISP-01" repeated on every page open a paragraph too, but never form
such a sequence: read alone they are no label.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

# A candidate label: the paragraph's first token (at most LABEL_CHARS), bracketed or
# not, an ordinal's degree sign kept ("7.1\u00b0"), ending in ".", ":" or ")" or not; what
# follows it is the clause's text.
LABEL_CHARS = 16
_TOKEN = re.compile(
    r"^\s*(?P<label>[\[(]?[A-Za-z0-9]{1,6}(?:(?:[.)]?\(|[.\-_/]|\)\.?)[A-Za-z0-9]{1,6}){0,4}"
    r"[\])]?[\u00b0\u00ba]?)(?P<end>[.:)]?)(?P<gap>\t|\s+)(?P<text>\S.*)$",
    re.S,
)
_PART = re.compile(r"[A-Za-z]+|\d+")
_LONE = re.compile(r"[nAaRr]\d*")  # the scheme of one counter and nothing else
_ROMAN = re.compile(r"^(?:x{0,3})(?:ix|iv|v?i{0,3})$")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10}
# A scheme is the document's when this many of its labels are read ...
MIN_LABELS = 3
# ... and this share of each label and the next count up (or start again): a clause
# removed or a label mistyped leaves the rest a sequence.
MIN_IN_ORDER = 0.75


@dataclass(frozen=True)
class Candidate:
    """A paragraph's first token read as a label: `schemes` its possible shapes (a lone
    "i" or "V" is a letter or a Roman numeral), `values` its counters under each."""

    label: str
    text: str
    schemes: tuple[str, ...]
    values: tuple[tuple[int, ...], ...]
    # How the label is set off: "()" bracketed, ")" closed, "." stopped, "" neither. A
    # statute's "(2)" and the "1." points under it count alike but are two levels.
    form: str = ""

    @property
    def lone(self) -> bool:
        """A lone counter ("(a)", "b)", "4."): a list's marker, or a sub-clause."""
        return all(_LONE.fullmatch(s) for s in self.schemes)


def candidate(text: str) -> Candidate | None:
    """The label a paragraph opens with, if its first token could be one."""
    found = _TOKEN.match(text)
    if found is None or len(found.group("label")) > LABEL_CHARS:
        return None
    label = found.group("label")
    bare = _bare(label)
    if not bare or bare.count("(") != bare.count(")"):
        return None
    parts = _PART.findall(bare)
    set_off = (
        found.group("end")
        or found.group("gap") == "\t"
        or label != bare
        or bare[-1] in "\u00b0\u00ba"
    )
    if len(parts) == 1 and not set_off:
        return None  # "A user must ...": a lone letter or number is set off by ".", ")" or a tab
    readings = _readings(parts, re.split(r"[A-Za-z]+|\d+", bare))
    if not readings:
        return None
    schemes = tuple(s for s, _ in readings)
    values = tuple(v for _, v in readings)
    read = Candidate(bare, found.group("text").strip(), schemes, values, _form(label, found))
    if not read.lone and read.text[:1].islower() and not bare.endswith(")"):
        return None  # "X.c within 24 hours": a clause cited in a wrapped line, no label
    # (a bracketed last counter, "6.a.(1) approve ...", is a sub-clause's label)
    return read


def _form(label: str, found: re.Match[str]) -> str:
    """How `label` is set off (`Candidate.form`)."""
    if label[:1] in "([" and label[-1:] in ")]":
        return "()"
    if label[-1:] == ")" or found.group("end") == ")":
        return ")"
    return "." if found.group("end") == "." else ""


def _bare(label: str) -> str:
    """The label without what sets it off: "[4]" -> "4", "(b)" and "b)" -> "b"; a
    bracket it holds kept ("3.2(a)", "AC-2(1)")."""
    if label[:1] == "[" and label[-1:] == "]":
        return label[1:-1]
    bare = label[1:] if label[:1] == "(" else label
    return bare[:-1] if bare[-1:] == ")" and bare.count("(") < bare.count(")") else bare


def _readings(parts: list[str], separators: list[str]) -> list[tuple[str, tuple[int, ...]]]:
    """Each shape the parts can be read in, with its counters' values; none when no part
    counts (a word alone, "The", is no label) or a word runs long."""
    options: list[list[tuple[str, int | None]]] = [[]]
    for part in parts:
        kinds = _kinds(part)
        if not kinds:
            return []
        options = [[*o, k] for o in options for k in kinds][:8]
    out = []
    for option in options:
        counters = tuple(v for _, v in option if v is not None)
        if not counters:
            continue
        shape = (
            "".join(sep + kind for sep, (kind, _) in zip(separators, option, strict=False))
            + separators[-1]
        )
        out.append((shape, counters))
    return out


def _kinds(part: str) -> list[tuple[str, int | None]]:
    """What a part can be: an Arabic number ("n", "n2" for "01": its width kept), a
    Roman numeral ("R", "r"), a letter ("A", "a"), or a fixed word (itself)."""
    if part.isdigit():
        return [("n" if len(part) == 1 or part[0] != "0" else f"n{len(part)}", int(part))]
    kinds: list[tuple[str, int | None]] = []
    low = part.lower()
    if _ROMAN.match(low) and len(part) <= 5 and (part.isupper() or part.islower()):
        kinds.append(("R" if part.isupper() else "r", _roman(low)))
    if len(part) == 1:
        kinds.append(("A" if part.isupper() else "a", ord(low) - ord("a") + 1))
    if not kinds and part.isupper() and len(part) <= 6:
        kinds.append((part, None))
    return kinds


def _roman(text: str) -> int:
    total = 0
    values = [_ROMAN_VALUES[c] for c in text]
    for i, v in enumerate(values):
        total += -v if i + 1 < len(values) and values[i + 1] > v else v
    return total


def _counts_on(before: tuple[int, ...], after: tuple[int, ...]) -> bool:
    """Whether `after` follows `before` as a person numbers: one counter steps up by one
    (or two or three: a clause removed), those before it kept, those after it started
    again at 1; or the scheme starts again (1, a, i) under a new clause or heading."""
    if all(v == 1 for v in after[-1:]) and after[:-1] != before[:-1]:
        return True  # a new clause's first sub-clause ("3.2(a)" after "3.1(c)")
    for k in range(len(after)):
        if after[:k] == before[:k] and 1 <= after[k] - before[k] <= 3:
            return all(v == 1 for v in after[k + 1 :]) or after[k + 1 :] == before[k + 1 :]
    return after[-1] == 1


@dataclass(frozen=True)
class Numbering:
    """The schemes a document numbers its clauses in (empty: none learnt)."""

    schemes: frozenset[str] = frozenset()

    @classmethod
    def learnt(cls, texts: Iterable[str]) -> Numbering:
        """The schemes that count up through the paragraphs `texts`, in reading order."""
        seen: dict[str, list[tuple[int, ...]]] = {}
        for text in texts:
            found = candidate(text)
            if found is None:
                continue
            for scheme, values in zip(found.schemes, found.values, strict=True):
                seen.setdefault(scheme, []).append(values)
        return cls(frozenset(s for s, values in seen.items() if _a_sequence(values)))

    def label(self, text: str) -> Candidate | None:
        """The document's label a paragraph opens with, if it opens with one."""
        found = candidate(text)
        if found is None or not self.schemes.intersection(found.schemes):
            return None
        return found

    def said(self) -> str:
        return ", ".join(sorted(self.schemes))


def _a_sequence(values: list[tuple[int, ...]]) -> bool:
    if len(values) < MIN_LABELS:
        return False
    pairs = list(pairwise(values))
    stepped = sum(1 for a, b in pairs if b != a and _counts_on(a, b))
    repeated = sum(1 for a, b in pairs if a == b)
    return stepped >= MIN_IN_ORDER * len(pairs) and repeated * 4 <= len(pairs)
