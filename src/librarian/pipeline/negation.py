"""Negation parity: a section that says the opposite of a hub's name must reach a person.

"Passwords need not be hashed" sits next to "Hash passwords" in any embedding space;
a cosine cannot see the "not". Hub names carry their own negations ("Do not log
credentials"), so what flags is a mismatch: one side negated, the other not.
"""

from __future__ import annotations

import re

_NEGATION = re.compile(
    r"\b(not|never|no|none|nor|cannot|without|neither|needn't|"
    r"[a-z]+n't|no longer|optional|unnecessary|prohibited from|exempt)\b",
    re.IGNORECASE,
)


def negations(text: str) -> int:
    return len(_NEGATION.findall(text.replace("\u2019", "'")))


def negation_differs(one: str, other: str) -> bool:
    """True when exactly one of the two texts is negated (a section and a hub name, or a
    span's old and new text)."""
    return (negations(one) > 0) != (negations(other) > 0)
