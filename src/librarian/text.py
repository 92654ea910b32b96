"""Text hygiene at the boundary: what a row may not carry, and how text a person reads is
shown when it hides characters.

A lone surrogate cannot be written as UTF-8 and a NUL cannot be stored by PostgreSQL: a
row carrying either is refused where it enters, never half-way through a run. Bidi
controls and zero-width characters are legal text but can make one string display as
another: every human-facing output shows them by name.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Any, NamedTuple

# JSON nested deeper than this is refused: no queue row or envelope needs more than a few.
MAX_DEPTH = 32

# Bidi embeddings/overrides/isolates and marks, zero-width characters, the BOM used
# inside text, the soft hyphen, the deprecated shaping and digit controls (U+206A-206F),
# the line and paragraph separators (a break in some renderers, nothing in others), the
# interlinear annotation marks (U+FFF9-FFFB) and the tag characters (U+E0000-E007F, which
# spell out an invisible second text): invisible, or reordering what is around them.
_HIDDEN = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f"
    "\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def key_digest(text: str) -> str:
    """A short digest, equal exactly when the texts are (the slot of C.5 compares item
    keys and texts by it)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def hidden_characters(text: str) -> list[str]:
    """The code points of `text` that are invisible or reorder text, as `U+XXXX`."""
    return [f"U+{ord(c):04X}" for c in _HIDDEN.findall(text)]


def visible(text: str) -> str:
    """`text` with every hidden character shown as ⟨U+XXXX⟩ and other control characters
    (not tab or newline) likewise, so what a person reads is what the string holds."""

    def show(match: re.Match[str]) -> str:
        return f"⟨U+{ord(match.group()):04X}⟩"

    shown = _HIDDEN.sub(show, text)
    return "".join(
        f"⟨U+{ord(c):04X}⟩" if unicodedata.category(c) == "Cc" and c not in "\t\n" else c
        for c in shown
    )


def terminal_line(text: str) -> str:
    """`text` for one line of a terminal: `visible`, and a line break shown too, so a
    document's text cannot start a line of its own, colour or retitle the terminal (an
    ANSI or OSC escape starts with ESC, U+001B, or C1's CSI or OSC, U+009B and U+009D:
    each is shown, and what follows it is plain text), or reorder what is around it."""
    return visible(text).replace("\n", "⟨U+000A⟩")


# `_` is left alone: reason codes are full of it, and inside a word it emphasises nothing.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*\[\]|])")


def markdown_cell(text: str, limit: int = 300) -> str:
    """Text we did not write, for one Markdown table cell: on one line, hidden characters
    shown, HTML escaped (no tag, entity or autolink) and the punctuation that makes links,
    images, code and emphasis, or ends a cell, backslash-escaped."""
    shown = visible(" ".join(str(text).split()))[:limit]
    shown = shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", shown)


QUOTED_WORDS = 12  # what a refusal or a skip quotes of the text it is about


def quoted(text: str | None, words: int = QUOTED_WORDS) -> str:
    """The first `words` words of a text, in quotes, on one line, every hidden character
    shown: what a skipped or refused row says of itself, so a person finds it."""
    parts = (text or "").split(maxsplit=words)  # the first words only: read on every row
    more = "…" if len(parts) > words else ""
    return "\u201c" + terminal_line(" ".join(parts[:words])) + more + "\u201d"


def has_visible_text(text: str) -> bool:
    """False when `text` holds only white space, format and control characters."""
    return any(not c.isspace() and unicodedata.category(c) not in ("Cf", "Cc") for c in text)


class Problem(NamedTuple):
    too_deep: bool  # else: a string that cannot be stored as text
    message: str


def value_problem(value: Any) -> Problem | None:
    """Why a parsed JSON value cannot be taken in, or None: nested deeper than MAX_DEPTH, or
    a string (key or value) holding a lone surrogate or a NUL. Iterative: no recursion."""
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    while stack:
        item, depth, where = stack.pop()
        if depth > MAX_DEPTH:
            return Problem(True, f"nested deeper than {MAX_DEPTH} levels (at {where or 'the top'})")
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return Problem(False, f"{where or 'a value'} holds an unpaired surrogate")
            if "\x00" in item:
                return Problem(False, f"{where or 'a value'} holds a NUL character")
        elif isinstance(item, dict):
            for key, inner in item.items():
                # ascii(): a key may itself hold what cannot be printed.
                path = f"{where}.{ascii(key)[1:-1]}".lstrip(".")[:80]
                stack.append((key, depth + 1, path))
                stack.append((inner, depth + 1, path))
        elif isinstance(item, list):
            stack.extend((inner, depth + 1, f"{where}[{i}]") for i, inner in enumerate(item))
    return None


def content_hash(text: str) -> str:
    """sha256 of the text as UTF-8, hex: what "the same text" means everywhere."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def counted(n: int, one: str, many: str | None = None) -> str:
    """`n` and the noun it counts, in the right number: "1 item", "3 items"."""
    return f"{n} {one if n == 1 else many or one + 's'}"
