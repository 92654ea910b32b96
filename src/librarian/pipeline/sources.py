"""Sources: where raw batches come from. A knowledge-queue JSONL file is streamed from a
byte offset; a plain input (any shape of `pipeline.shapes`) is read whole, each row of
one document validated as the KnowledgeItem it makes (`RawBatch.records`). The queue
table's source is `store/source.py`.

A source yields `RawBatch`es of at most `size` non-blank lines, in input order, and
reads nothing before it is iterated.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Protocol

from librarian.errors import InputError
from librarian.pipeline import shapes
from librarian.pipeline.aligned import Item
from librarian.pipeline.batches import Admitted
from librarian.pipeline.plain import PlainRows, artifact_of, default_name, plain_rows, shaped
from librarian.pipeline.shapes.rows import Magic, PlainRow, PlainShape, Split, Unreadable
from librarian.schemas.records import Claimed, RawBatch

_BOM = b"\xef\xbb\xbf"


def binary_shape(path: Path) -> bool:
    """A Word or PDF file: read by its own library, never sniffed as text (NUL bytes in a
    .docx's or .pdf's first 4 KB are no UTF-16)."""
    return any(shape.binary and shape.takes(path) for shape in shapes.registered())


def known_shape(path: Path) -> bool:
    """A file the librarian can read: guessing JSONL for any other name rejected every
    line of a text or Word file, and the run still exited 0."""
    return path.suffix.lower() in shapes.suffixes()


# What may come before a file's magic bytes and still leave it that file: whitespace and
# a BOM (a PDF's readers look for `%PDF-` past them; a zip is read from its end).
_SKIPPED = b" \t\r\n\f\v"
SNIFFED = 1024  # bytes read to find the magic in


def mislabelled(path: Path) -> str | None:
    """Why `path`'s name misleads about what it is ("report.jsonl is a PDF document: name
    it .pdf"), or None: a PDF named .jsonl was read as 102 rejected queue lines, exit 0
    (and, with 5 bytes of whitespace or a BOM before its `%PDF-`, as 48)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFFED)
    except OSError:
        return None  # the readable-input check says why
    while (skipped := head.removeprefix(_BOM).lstrip(_SKIPPED)) != head:
        head = skipped
    for magic, kinds in shapes_by_magic().items():
        if head.startswith(magic.head) and not any(k.takes(path) for k in kinds):
            named = path.suffix or "plain"
            return (
                f"{path} is {magic.what} (its first bytes say so), not a {named} file: name "
                f"it {' or '.join(k.suffixes[0] for k in kinds)} to read it as one"
            )
    return None


def shapes_by_magic() -> dict[Magic, list[PlainShape]]:
    """Each first-bytes signature a shape declares, and the shapes whose files start
    with it (a zip: every OOXML shape)."""
    out: dict[Magic, list[PlainShape]] = {}
    for shape in shapes.PLAIN_SHAPES:
        for magic in shape.magic:
            out.setdefault(magic, []).append(shape)
    return out


class Source(Protocol):
    @property
    def name(self) -> str:
        """What the run summary calls the input."""
        ...

    def batches(
        self, size: int, skip: Collection[int] = ()
    ) -> Iterator[RawBatch | Claimed | Admitted]:
        """`skip`: queue ids that failed earlier in this run (only the queue table has ids,
        and only its batches come `Claimed`; only a store's own items come `Admitted`)."""
        ...


@dataclass(frozen=True)
class JsonlFile:
    path: Path

    @property
    def name(self) -> str:
        return str(self.path)

    def batches(self, size: int, skip: Collection[int] = ()) -> Iterator[RawBatch]:
        offset, line = 0, 1
        while True:
            batch = read_batch(self.path, offset, line, size)
            yield batch
            if batch.eof:
                return
            offset, line = batch.next_offset, batch.next_line


@dataclass(frozen=True)
class PlainFile:
    """A CSV / Markdown / Word / PDF / simple JSONL table: rows of the document
    `document`, read once (`rows`: the command line counts them for the progress bar, the
    run takes their records)."""

    path: Path
    document: str | None = None
    shape: PlainShape | None = None  # None: found from the file
    previous: tuple[Item, ...] = ()  # its last version's items, matched to by text

    @property
    def name(self) -> str:
        return str(self.path)

    @property
    def artifact_id(self) -> str:
        return artifact_of(self.document or default_name(self.path))

    @cached_property
    def read(self) -> list[PlainRow | Unreadable | Split]:
        """What its shape read of the file, once."""
        return shaped(self.path, self.shape)

    @cached_property
    def rows(self) -> PlainRows:
        return plain_rows(self.path, self.document, self.shape, self.previous, self.read)

    def matched_to(self, previous: tuple[Item, ...]) -> PlainFile:
        """The same file, its rows matched by text to `previous` (its last version's
        items), from what was read of it already: the file is not read again."""
        matched = replace(self, previous=previous)
        matched.__dict__["read"] = self.read  # `cached_property`'s own store
        return matched

    def batches(self, size: int, skip: Collection[int] = ()) -> Iterator[RawBatch]:
        rows = self.rows
        lines = rows.lines
        for start in range(0, max(1, len(lines)), size):
            chunk = lines[start : start + size]
            end = start + len(chunk)
            records = {n: rows.records[n] for n, _ in chunk}
            yield RawBatch(chunk, 0, end, 0, eof=end >= len(lines), records=records)


def reading_of(source: Source) -> list[str]:
    """How a document input was split into items, and any warning (none: a table or the
    queue)."""
    if isinstance(source, PlainFile):
        split = source.rows.split.lines() if source.rows.split is not None else []
        return split + source.rows.version
    return []


def file_source(path: Path, document: str | None = None) -> JsonlFile | PlainFile:
    """The file as a source, its shape found once (a .jsonl file's first row read) and
    carried to the reading."""
    shape = shapes.shape_of(path)
    if shape is None:
        raise InputError(f"{path}: the librarian reads {shapes.in_words()}")
    return PlainFile(path, document, shape) if isinstance(shape, PlainShape) else JsonlFile(path)


def read_batch(path: Path, offset: int, first_line: int, max_lines: int) -> RawBatch:
    """Read the next batch of raw lines; a BOM at the start, CRLF and blank lines are tolerated."""
    lines: list[tuple[int, bytes]] = []
    blank = 0
    line_no = first_line
    with path.open("rb") as handle:
        handle.seek(offset)
        while len(lines) < max_lines:
            raw = handle.readline()
            if not raw:
                return RawBatch(lines, blank, handle.tell(), line_no, eof=True)
            if line_no == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM) :]
            raw = raw.rstrip(b"\r\n")
            if raw.strip():
                lines.append((line_no, raw))
            else:
                blank += 1
            line_no += 1
        next_offset = handle.tell()
        eof = not handle.read(1)
    return RawBatch(lines, blank, next_offset, line_no, eof)
