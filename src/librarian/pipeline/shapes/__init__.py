"""The shapes of file a run reads: one module a shape, and this registry. A plain shape
reads a file whole, as the sections of one document, yielding typed rows
(`rows.PlainRow`); the knowledge queue's own JSONL is streamed line by line
(`queue_jsonl`). A new shape is one module, its `SHAPE` added here, and its test: every
list of shapes the help, the errors and the docs give is made from this registry
(`in_words`), and a file's shape is found here once (`shape_of`) and carried."""

from __future__ import annotations

from pathlib import Path

from librarian.pipeline.shapes import (
    csv_table,
    jsonl_table,
    markdown,
    pdf,
    queue_jsonl,
    word,
    xlsx_table,
)
from librarian.pipeline.shapes.rows import PlainShape, Shape, StreamedShape

PLAIN_SHAPES: tuple[PlainShape, ...] = (
    csv_table.SHAPE,
    xlsx_table.SHAPE,
    markdown.SHAPE,
    word.SHAPE,
    pdf.SHAPE,
    jsonl_table.SHAPE,
)
# Tried after every plain shape: a .jsonl file is the queue's unless its first row is a
# table's (`jsonl_table.claims`).
STREAMED_SHAPES: tuple[StreamedShape, ...] = (queue_jsonl.SHAPE,)


def registered() -> tuple[Shape, ...]:
    """Every shape, in the order a file is tried against them."""
    return (*PLAIN_SHAPES, *STREAMED_SHAPES)


def suffixes() -> tuple[str, ...]:
    """Every file name ending a shape reads."""
    return tuple(dict.fromkeys(s for shape in registered() for s in shape.suffixes))


def shape_of(path: Path) -> Shape | None:
    """The shape that reads `path` (a .jsonl file's first row read to tell a table from
    the queue's), or None: no shape reads it."""
    return next((shape for shape in registered() if shape.takes(path)), None)


def plain_shape(path: Path) -> PlainShape | None:
    """The shape that reads `path` whole, or None (the queue's JSONL, or no known shape)."""
    shape = shape_of(path)
    return shape if isinstance(shape, PlainShape) else None


def in_words(queue: bool = True) -> str:
    """Every shape a run reads, as a list in words (`queue`: the streamed ones first)."""
    names = [shape.name for shape in STREAMED_SHAPES] if queue else []
    names += [shape.name for shape in PLAIN_SHAPES]
    return ", ".join(names[:-1]) + " or " + names[-1]
