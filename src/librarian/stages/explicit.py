"""Stage 1: the explicit fast path for sections that cite a CRE id.

`CRE 616-305`, `CRE:616-305`, `CRE-616-305` and opencre.org/cre/616-305 are
citations whether or not the hub knows the id (an unknown one goes to review).
A bare `616-305` counts only when the hub knows it, since bare ddd-ddd also
turns up in phone numbers, dates and product codes. Digits inside longer
numbers, dates, phone numbers or versions never match.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass

# Not preceded by a word char, '.', '/', ':' or '-'; not followed by a word char,
# '-' or '.digit' (so 1616-305, 2024-616-305, 555-123-4567 and 616-305.2 do not match).
_ID = r"(\d{3}-\d{3})(?![\w-]|\.\d)"
_PREFIXED = re.compile(r"(?:(?<![\w-])CRE\s*[:#-]?\s*|opencre\.org/cre/)" + _ID, re.IGNORECASE)
_BARE = re.compile(r"(?<![\w./:#-])" + _ID)


@dataclass(frozen=True)
class ExplicitReference:
    """The distinct CRE ids a text cites, split by whether the hub knows them."""

    known: tuple[str, ...]
    unknown: tuple[str, ...]

    @property
    def is_single_known(self) -> bool:
        return len(self.known) == 1 and not self.unknown


def find_references(text: str, hub_ids: Container[str]) -> ExplicitReference | None:
    """The CRE ids cited in `text`, or None when it cites none."""
    cited: dict[str, bool] = {}
    for match in _PREFIXED.finditer(text):
        cited.setdefault(match.group(1), True)
    for match in _BARE.finditer(text):
        if match.group(1) in hub_ids:
            cited.setdefault(match.group(1), False)
    if not cited:
        return None
    known = tuple(sorted(i for i in cited if i in hub_ids))
    unknown = tuple(sorted(i for i in cited if i not in hub_ids))
    return ExplicitReference(known=known, unknown=unknown)
