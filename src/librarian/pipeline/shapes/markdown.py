"""A Markdown document, a section a heading (CommonMark, by markdown-it-py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from itertools import chain
from pathlib import Path
from typing import Any

from librarian.pipeline.shapes.rows import (
    PlainRow,
    PlainShape,
    Split,
    Unreadable,
    heading_title,
    text_of,
)
from librarian.pipeline.shapes.segment import Block, BlockKind, Segmenter

# A block longer than this is split at paragraph ends (requirement-sized).
BLOCK_CHARS = 1500


def read(path: Path) -> Iterator[PlainRow | Unreadable | Split]:
    yield from _segmented(text_of(path))


def markdown_blocks(text: str) -> Iterator[PlainRow]:
    """Items of a Markdown document (`segment.Segmenter`): headings (ATX and setext; a
    fence's `#` is no heading) make section paths, paragraphs, list items and pipe tables
    its blocks; YAML front matter is no text. A section's text is split into
    requirement-sized blocks (past BLOCK_CHARS, between paragraphs); ids are the heading
    path as Unicode slugs (a repeat numbered) and the item's number under it."""
    return (row for row in _segmented(text) if isinstance(row, PlainRow))


def _segmented(text: str) -> Iterator[PlainRow | Split]:
    segmenter = Segmenter(
        numbered_body=True, body_chars=BLOCK_CHARS, titled=True, typed_markers=False
    )
    rows = (row for block in _document_blocks(text) for row in segmenter.feed(block))
    for row in chain(rows, segmenter.end()):
        # A Markdown row is located by its heading path alone (its locator as before the
        # segmenter); the line a block starts on names it in the run's "read:" lines only.
        yield replace(row, where=None)
    yield segmenter.split


def _document_blocks(text: str) -> Iterator[Block]:
    # Lines as markdown-it counts them (at line feeds alone: `splitlines` also cut at
    # U+2028 and form feeds, and every block after one was read from the wrong lines).
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    parser = _parser()
    for begin, end in _pieces(lines):
        tokens = parser.parse("\n".join(lines[begin:end]))
        yield from _piece_blocks(tokens, lines, begin)


def _piece_blocks(tokens: list[Any], lines: list[str], begin: int) -> Iterator[Block]:
    """The blocks of a piece of the document parsed alone (`begin`: its first line)."""
    for index, token in enumerate(tokens):
        if token.level != 0 or token.map is None or token.nesting == -1:
            continue
        if token.type == "hr" or (token.type == "front_matter" and _is_metadata(token.content)):
            continue
        first, last = (begin + n for n in token.map)
        where = f"line {first + 1}"
        if token.type == "heading_open":
            title = heading_title(tokens[index + 1].content)
            yield Block("heading", title, where, level=int(token.tag[1:]))
        elif token.type in ("bullet_list_open", "ordered_list_open"):
            kind: BlockKind = "numbered" if token.type == "ordered_list_open" else "bullet"
            yield from _list_items(tokens, index, lines, kind, begin)
        elif token.type == "table_open":
            yield Block("table", "", where, cells=_table_cells(tokens, index))
        else:
            yield Block("paragraph", _unwrapped("\n".join(lines[first:last])), where)


# markdown-it holds every token of what it parses (~300 bytes each, several an item: a
# 2 MB list of short items was most of a gigabyte), so a long document is parsed a piece
# of PIECE_LINES lines or so at a time. A piece ends only before an item of a top-level
# bulleted list, where a cut changes nothing read (each item is its own block either
# way, and a bullet interrupts any paragraph), and only while nothing that may span
# lines has been seen: at the first fence, HTML, table or front matter, no cut follows.
PIECE_LINES = 2_000
_CUT_BEFORE = re.compile(r"[-*+] +[^\s*+-]")
_MAY_SPAN = re.compile(r" {0,3}(?:```|~~~|<)|.*\|")


def _pieces(lines: list[str]) -> Iterator[tuple[int, int]]:
    """(first line, line after the last) of each piece the document is parsed in."""
    begin = 0
    for n, line in enumerate(lines):
        if _MAY_SPAN.match(line) or (n == 0 and line.startswith("---")):
            break
        if n - begin >= PIECE_LINES and _CUT_BEFORE.match(line):
            yield begin, n
            begin = n
    yield begin, len(lines)


def _list_items(
    tokens: list[Any], start: int, lines: list[str], kind: BlockKind, begin: int
) -> Iterator[Block]:
    """A top-level list's items, each its lines without the marker."""
    for index in range(start + 1, len(tokens)):  # by index: a slice copied the rest each list
        token = tokens[index]
        if token.level == 0:
            return
        if token.type == "list_item_open" and token.level == 1 and token.map is not None:
            first, last = (begin + n for n in token.map)
            text = " ".join(ln.strip() for ln in lines[first:last] if ln.strip())
            text = _unwrapped(LIST_MARKER.sub("", text, count=1))
            yield Block(kind, text, f"line {first + 1}")


def _table_cells(tokens: list[Any], start: int) -> tuple[tuple[str, ...], ...]:
    rows: list[list[str]] = []
    for index in range(start + 1, len(tokens)):
        token = tokens[index]
        if token.type == "table_close":
            break
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append(_unwrapped(token.content))
    return tuple(tuple(r) for r in rows)


# A list item's own marker: "- ", "* ", "+ ", "1. ", "2) ".
LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")
# Emphasis around a paragraph's opening id ("**POL-AC-01** Users must …").
_EMPHASIS = re.compile(r"^(\*\*|__|\*|_)([^*_\n]{1,40})\1(?=\s)")


def _unwrapped(text: str) -> str:
    return _EMPHASIS.sub(r"\2", text.strip(), count=1)


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

    # Blocks alone: their inline content is read as written, never parsed into tokens.
    return MarkdownIt("commonmark").enable("table").use(front_matter_plugin).disable("inline")


SHAPE = PlainShape("a Markdown document (.md)", (".md", ".markdown"), read)
