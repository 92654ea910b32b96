"""Which columns of a document's table hold requirement ids and requirement text (a
table of definitions, owners or versions holds neither)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from librarian.pipeline.shapes.rows import ID_CELL, requirement_shaped

# A column of a document's versions ("Version 3.0", "Issue", "Rev."): numbered like ids,
# but a revision history's, no requirement's.
_VERSIONS = re.compile(
    r"^(?:version|ver\.?|v\.?|issue|revision|rev\.?|edition|release|date)(?:\s*(?:no\.?|number|#))?$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TableReading:
    ids: int | None  # the column of requirement ids (None: numbered in order)
    text: int  # the column of requirement text
    first: int  # the first data row (1: the first row is a header)
    said: str


def table_columns(rows: Sequence[Sequence[str]]) -> TableReading | None:
    """Which columns of a table hold ids and requirement text; None when none does (a
    table of definitions, owners, versions)."""
    if not rows:
        return None
    width = max(len(r) for r in rows)
    column = [[r[j].strip() if j < len(r) else "" for r in rows] for j in range(width)]
    has_header = len(rows) > 1 and not any(ID_CELL.match(c[0]) for c in column if c[0])
    first = 1 if has_header else 0
    data = [c[first:] for c in column]
    ids = next(
        (
            j
            for j, c in enumerate(data)
            if _mostly(c, _is_id) and not (has_header and _VERSIONS.match(column[j][0]))
        ),
        None,
    )
    texts = [j for j in range(width) if j != ids]
    worded = [j for j in texts if _mostly(data[j], requirement_shaped)]
    if worded:
        text = max(worded, key=lambda j: sum(len(v) for v in data[j]))
    elif ids is not None and texts:
        text = max(texts, key=lambda j: sum(len(v) for v in data[j]))
    else:
        return None

    def named(j: int) -> str:
        return f"'{column[j][0]}'" if has_header and column[j][0] else f"column {j + 1}"

    said = (f"ids from {named(ids)}, " if ids is not None else "") + f"text from {named(text)}"
    return TableReading(ids, text, first, said)


def _mostly(cells: Sequence[str], test: Callable[[str], bool]) -> bool:
    filled = [c for c in cells if c]
    return bool(filled) and sum(1 for c in filled if test(c)) * 2 > len(filled)


def _is_id(cell: str) -> bool:
    return ID_CELL.match(cell) is not None
