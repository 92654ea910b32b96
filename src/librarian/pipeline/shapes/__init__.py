"""The shapes of file a run reads whole, as the sections of one document: one module a
shape, each yielding typed rows (`rows.PlainRow`), and this registry. A new shape is one
module, its `SHAPE` added here, and its test. The knowledge queue's own JSONL is no
plain shape: it is streamed line by line (`pipeline/sources.JsonlFile`)."""

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


def plain_shape(path: Path) -> PlainShape | None:
    """The shape that reads `path` whole, or None (the queue's JSONL, or no known shape)."""
    return next((shape for shape in PLAIN_SHAPES if shape.takes(path)), None)
