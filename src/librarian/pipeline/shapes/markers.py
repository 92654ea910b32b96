"""A list item's marker typed into its text: what opens a list's item in a PDF, or in a
Word paragraph numbered by hand."""

from __future__ import annotations

import re

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
