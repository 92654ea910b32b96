"""The knowledge queue's own JSONL (queue rows or KnowledgeItems, one JSON object a line):
the one shape not read whole. A run streams it from a byte offset, batch by batch
(`pipeline/sources.JsonlFile`), and each line's own keys say which of the queue's shapes
it is (`pipeline/ingest.parse_line`)."""

from __future__ import annotations

from librarian.pipeline.shapes.rows import StreamedShape

SHAPE = StreamedShape(
    "the knowledge queue's JSONL (.jsonl: queue rows or KnowledgeItems)", (".jsonl", ".ndjson")
)
