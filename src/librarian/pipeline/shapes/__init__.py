"""The shapes of file a run reads whole, as the sections of one document: one module a
shape, each yielding typed rows (`rows.PlainRow`), and this registry. A new shape is one
module, its `SHAPE` added here, and its test: every list of shapes the help, the errors
and the docs give is made from this registry (`in_words`). The knowledge queue's own
JSONL is no plain shape: it is streamed line by line (`pipeline/sources.JsonlFile`)."""

from __future__ import annotations

from pathlib import Path

from librarian.pipeline.shapes import csv_table, jsonl_table, markdown, pdf, word
from librarian.pipeline.shapes.rows import PlainShape

PLAIN_SHAPES: tuple[PlainShape, ...] = (
    csv_table.SHAPE,
    markdown.SHAPE,
    word.SHAPE,
    pdf.SHAPE,
    jsonl_table.SHAPE,
)


def suffixes() -> tuple[str, ...]:
    """Every file name ending a plain shape reads."""
    return tuple(suffix for shape in PLAIN_SHAPES for suffix in shape.suffixes)


def plain_shape(path: Path) -> PlainShape | None:
    """The shape that reads `path` whole, or None (the queue's JSONL, or no known shape)."""
    return next((shape for shape in PLAIN_SHAPES if shape.takes(path)), None)


QUEUE_JSONL = "the knowledge queue's JSONL (.jsonl: queue rows or KnowledgeItems)"


def in_words(queue: bool = True) -> str:
    """Every shape a run reads, as a list in words (`queue`: the queue's JSONL first)."""
    names = [QUEUE_JSONL] if queue else []
    names += [shape.name for shape in PLAIN_SHAPES]
    return ", ".join(names[:-1]) + " or " + names[-1]
