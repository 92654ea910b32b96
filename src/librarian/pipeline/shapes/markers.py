"""A list item's marker typed into its text: what opens a list's item in a PDF, or in a
Word paragraph numbered by hand."""

from __future__ import annotations

import re
from typing import Literal

# A list item's marker typed into its text, as a PDF shows every list's and a Word file
# one typed by hand: a bullet ("•", "-", Word's symbol-font ones), or a number or a
# letter ("1.", "a)", "(iv)").
BULLET = re.compile(
    r"^\s*(?:[\u2022\u25cf\u25aa\u25a0\u25e6\u2023\u2043\u2219\u00b7\u2013*\uf0b7\uf0a7\uf076\uf0d8-]"
    r"|[\u2610\u2611\u2612\u25a1]|\[[ xX\u2713]?\])\s+"  # a checklist's boxes too: ☐, [ ], [x]
)
# A procedure's steps count too ("Step 3", then a tab, a stop or a sentence, as SOPs
# type them).
NUMBER = re.compile(
    r"^\s*(?:\(?(?:\d{1,2}|[a-z]|[ivx]{1,4})[.)]\s+"
    r"|(?:Step|STEP) \d{1,2}(?:[.:)]?\s+(?=[A-Z])|\t\s*))(?=\S)"
)
# A step keeps its word: a person cites "Procedure B, Step 3", the procedure by the
# designation its heading opens with, not the heading's slug and a count.
STEP = re.compile(r"^\s*(?:Step|STEP) (\d{1,2})\b")
DESIGNATION = re.compile(
    r"^(?i:procedure|process|annex|appendix|schedule|part|chapter|phase|stage)\s+"
    r"(?:[A-Z]|[IVX]{1,4}|\d{1,2})\b"
)

_KINDS: tuple[tuple[re.Pattern[str], Literal["bullet", "numbered"]], ...] = (
    (BULLET, "bullet"),
    (NUMBER, "numbered"),
)


def typed_marker(text: str, label: str) -> tuple[Literal["bullet", "numbered"], str, str] | None:
    """A paragraph opening with a list marker typed into its text: the list it is of, its
    text without the marker, and its label (the step a marker names, "STEP 3. Do …":
    "Step 3"; else `label`, its number as Word shows it); None: no marker."""
    for marker, kind in _KINDS:
        if marker.match(text):
            step = STEP.match(text)
            return kind, marker.sub("", text, count=1), f"Step {step[1]}" if step else label
    return None


def step_id(marker: str, headings: tuple[str, ...], slug: str) -> str:
    """The id of a list item a step's marker opened (`marker`, as `typed_marker` gives it):
    its procedure's designation, else its heading's slug, and the step ("Procedure B,
    Step 3"); "" for any other item (its id is counted). `headings`: the path to it."""
    if not marker.startswith("Step "):
        return ""
    designation = DESIGNATION.match(headings[-1]) if headings else None
    return f"{designation.group(0) if designation else slug}, {marker}"
