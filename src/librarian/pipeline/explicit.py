"""C.2: the explicit fast path for sections that cite a CRE id.

An explicit citation must look like one. `CRE 616-305`, `CRE:616-305`, `CRE-616-305`,
`CRE#616-305` and `opencre.org/cre/616-305` are citations whether or not the hub knows
the id (an unknown one goes to review). A bare `616-305` counts only when the hub knows it
*and* the words just before it, in the same sentence, name a CRE ("CREs 616-305 and
760-764", "OpenCRE: 616-305"): bare ddd-ddd also turns up in invoice numbers, scores and
release names. Digits inside longer numbers, dates, phone numbers or versions never match.

A citation the text negates ("does not satisfy CRE 616-305") is reported as negated, and
one with invisible or reordering characters inside or just before it (a zero-width space,
a right-to-left override) as hiding characters: both go to a person, never auto-link.
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from dataclasses import dataclass

from librarian.schemas.envelopes import AdversarialFlag
from librarian.text import hidden_characters

# Not preceded by a word char, '.', '/', ':' or '-'; not followed by a word char,
# '-' or '.digit' (so 1616-305, 2024-616-305, 555-123-4567 and 616-305.2 do not match).
_ID = r"(\d{3}-\d{3})(?![\w-]|\.\d)"
_PREFIXED = re.compile(r"(?:(?<![\w-])CRE\s*[:#-]?\s*|opencre\.org/cre/)" + _ID, re.IGNORECASE)
_BARE = re.compile(r"(?<![\w./:#-])" + _ID)
# What must precede a bare id, in the same sentence, for it to be a citation.
_NAMES_A_CRE = re.compile(r"\b(?:open)?cres?\b", re.IGNORECASE)
_NEGATION = re.compile(
    r"\b(?:not|never|no longer|neither|nor|without|unlike|except|instead of|fails? to|"
    r"[a-z]+n't)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?;]\s")
CONTEXT = 40  # characters before a citation that are read with it


@dataclass(frozen=True)
class ExplicitReference:
    """The distinct CRE ids a text cites, split by whether the hub knows them, and what
    makes the citation doubtful."""

    known: tuple[str, ...]
    unknown: tuple[str, ...]
    negated: bool = False
    hidden: tuple[str, ...] = ()  # code points hiding in or just before a citation

    @property
    def is_single_known(self) -> bool:
        return len(self.known) == 1 and not self.unknown

    @property
    def doubtful(self) -> bool:
        return self.negated or bool(self.hidden)

    def flags(self) -> list[AdversarialFlag]:
        flags: list[AdversarialFlag] = []
        if self.unknown:
            flags.append(AdversarialFlag.UNKNOWN_CRE_REFERENCE)
        if len(self.known) + len(self.unknown) > 1:
            flags.append(AdversarialFlag.CONFLICTING_CRE_REFERENCES)
        if self.negated:
            flags.append(AdversarialFlag.NEGATED_CRE_REFERENCE)
        if self.hidden:
            flags.append(AdversarialFlag.HIDDEN_CHARACTERS)
        return flags

    def doubts(self) -> list[str]:
        doubts = []
        if len(self.known) + len(self.unknown) > 1:
            doubts.append("alongside other references")
        if self.unknown:
            doubts.append(f"with ids the hub does not know ({', '.join(self.unknown)})")
        if self.negated:
            doubts.append("in a negated sentence")
        if self.hidden:
            doubts.append(f"with hidden characters {' '.join(self.hidden)}")
        return doubts


def _visible_with_positions(text: str) -> tuple[str, Sequence[int]]:
    """`text` without its hidden characters, and for each kept character its index in
    `text`, so a match in the one is a span of the other."""
    if not hidden_characters(text):
        return text, range(len(text))
    kept = [(i, c) for i, c in enumerate(text) if not hidden_characters(c)]
    return "".join(c for _, c in kept), [i for i, _ in kept]


def _before(text: str, start: int) -> str:
    """The words read with a citation: up to CONTEXT characters before it, this sentence."""
    window = text[max(0, start - CONTEXT) : start]
    ends = list(_SENTENCE_END.finditer(window))
    return window[ends[-1].end() :] if ends else window


def find_references(text: str, hub_ids: Container[str]) -> ExplicitReference | None:
    """The CRE ids cited in `text`, or None when it cites none."""
    seen, positions = _visible_with_positions(text)
    cited: dict[str, bool] = {}
    spans: list[tuple[int, int]] = []
    for match in _PREFIXED.finditer(seen):
        cited.setdefault(match.group(1), True)
        spans.append(match.span())
    for match in _BARE.finditer(seen):
        cre = match.group(1)
        if cre in hub_ids and _NAMES_A_CRE.search(_before(seen, match.start())):
            cited.setdefault(cre, False)
            spans.append(match.span())
    if not cited:
        return None
    negated = any(_NEGATION.search(_before(seen, start)) for start, _ in spans)
    hidden: list[str] = []
    for start, end in spans:
        first, last = positions[start], positions[end - 1]
        hidden += hidden_characters(text[max(0, first - 5) : last + 1])
    known = tuple(sorted(i for i in cited if i in hub_ids))
    unknown = tuple(sorted(i for i in cited if i not in hub_ids))
    return ExplicitReference(known, unknown, negated, tuple(dict.fromkeys(hidden)))
