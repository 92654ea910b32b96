"""Slugs of a document's headings: the ids of the items a heading's text makes
(`access-control-1`), unique within a document."""

from __future__ import annotations

import re
import unicodedata

from librarian.pipeline.shapes.rows import PREAMBLE_ID


class Slugs:
    """Slugs of heading paths, unique within a document: a repeat is numbered."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def seen_once(self, slug: str) -> bool:
        """Whether `slug` is the only heading read so far (the document's first): asked at
        every heading, so without listing every slug (a file of headings was quadratic)."""
        return len(self.seen) == 1 and slug in self.seen

    def of(self, headings: list[str]) -> str:
        slug = "/".join(slug_of(h) for h in headings) or PREAMBLE_ID
        count = self.seen.get(slug, 0)
        self.seen[slug] = count + 1
        return slug if count == 0 else f"{slug}-{count}"


def slug_of(heading: str) -> str:
    """Lower-case words of any script joined by '-' (`## Безопасность` is not `section`)."""
    words = re.findall(r"\w+", unicodedata.normalize("NFKC", heading).lower())
    return "-".join(words)[:60].strip("-") or "section"
