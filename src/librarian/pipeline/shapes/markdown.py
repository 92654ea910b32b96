"""A Markdown document, a section a heading (CommonMark, by markdown-it-py)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from librarian.pipeline.shapes.rows import (
    PlainRow,
    PlainShape,
    Unreadable,
    heading_title,
    text_of,
    title_of,
)

# A block longer than this is split at paragraph ends (requirement-sized).
BLOCK_CHARS = 1500


def read(path: Path) -> Iterator[PlainRow | Unreadable]:
    yield from markdown_blocks(text_of(path))


def markdown_blocks(text: str) -> Iterator[PlainRow]:
    """Sections of a Markdown document by heading (fences of either kind, setext headings;
    YAML front matter is no section). Each with text becomes one or more requirement-sized
    blocks (split between top-level blocks past BLOCK_CHARS). Ids are the heading path as
    Unicode slugs, a repeated heading numbered (`example`, `example-1`), then the block's
    number within its heading; `line` counts blocks, from 1."""
    lines = text.splitlines()
    path: list[tuple[int, str]] = []  # (level, heading) from the top
    body: list[str] = []
    slugs = Slugs()
    slug = "preamble"
    count = 0

    def flush(next_level: int = 0) -> Iterator[PlainRow]:
        """The blocks of the section just read; `next_level`: the heading that follows.
        The text under the document's first heading, when its sections follow (a title
        and then its chapters), is the document's introduction."""
        nonlocal count
        headings = tuple(h for _, h in path)
        intro = slugs.seen_once(slug) and len(path) == 1 and next_level > path[0][0]
        for i, block in enumerate(_blocks(body), start=1):
            count += 1
            title = title_of(headings)
            yield PlainRow(count, f"{slug}-{i}", block, title, None, headings, intro=intro)

    tokens = _parser().parse(text)
    for index, token in enumerate(tokens):
        if token.level != 0 or token.map is None or token.nesting == -1:
            continue
        if token.type == "hr" or (token.type == "front_matter" and _is_metadata(token.content)):
            continue
        if token.type == "heading_open":
            level = int(token.tag[1:])
            yield from flush(level)
            body = []
            heading = heading_title(tokens[index + 1].content)
            path = [*(p for p in path if p[0] < level), (level, heading)]
            slug = slugs.of([h for _, h in path])
            continue
        first, last = token.map
        body.append("\n".join(lines[first:last]))
    yield from flush()


def _is_metadata(front: str) -> bool:
    """Front matter is YAML keys and values; anything else between `---` lines is text
    (a document that opens with a rule), kept."""
    import yaml

    try:
        return isinstance(yaml.safe_load(front), dict)
    except yaml.YAMLError:
        return False


def _parser() -> Any:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    return MarkdownIt("commonmark").use(front_matter_plugin)


class Slugs:
    """Slugs of heading paths, unique within a document: a repeat is numbered."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def seen_once(self, slug: str) -> bool:
        """Whether `slug` is the only heading read so far (the document's first)."""
        return list(self.seen) == [slug]

    def of(self, headings: list[str]) -> str:
        slug = "/".join(slug_of(h) for h in headings) or "preamble"
        count = self.seen.get(slug, 0)
        self.seen[slug] = count + 1
        return slug if count == 0 else f"{slug}-{count}"


def _blocks(body: list[str]) -> Iterator[str]:
    current: list[str] = []
    for block in (b.strip() for b in body):
        if not block:
            continue
        if current and sum(len(p) for p in current) + len(block) > BLOCK_CHARS:
            yield "\n\n".join(current)
            current = []
        current.append(block)
    if current:
        yield "\n\n".join(current)


def slug_of(heading: str) -> str:
    """Lower-case words of any script joined by '-' (`## Безопасность` is not `section`)."""
    words = re.findall(r"\w+", unicodedata.normalize("NFKC", heading).lower())
    return "-".join(words)[:60].strip("-") or "section"


SHAPE = PlainShape("a Markdown document (.md)", (".md", ".markdown"), read)
