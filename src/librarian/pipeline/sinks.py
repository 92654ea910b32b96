"""Sinks: where a batch's outcomes go. `FileSink` writes the run's files, which appear
complete or not at all, and never over a good run (the database sink is `store/sink.py`).

A run writes into a fresh staging directory beside `--out` (`.NAME.XXXX.partial`, made
with mkdtemp: nothing planted there in advance can be written through) and swaps it into
place only when every line is accounted for: the previous run's directory is moved
aside, the new one renamed in, the old one removed. A failed or killed run leaves the
previous outputs as they were (and a `.partial` directory, removed on failure). Files are
opened with O_EXCL | O_NOFOLLOW and renames never follow a link: a symlink at `--out`
is replaced, not written through.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from pydantic import BaseModel

from librarian.schemas.envelopes import Envelope, LinkProposal, dump_envelope
from librarian.schemas.records import BatchResult

OUTPUT_FILES = (
    "proposals.jsonl",
    "reviews.jsonl",
    "rejected.jsonl",
    "skipped.jsonl",
    "routing.jsonl",  # beside the envelopes: which hub collections each section searched
)


class FileSink:
    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        self.staging = Path(
            tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".partial", dir=out_dir.parent)
        )
        self._handles: dict[str, IO[str]] = {
            name: _create(self.staging / name) for name in OUTPUT_FILES
        }

    def paths(self) -> dict[str, str]:
        return {
            name.split(".")[0]: str(self.out_dir / name) for name in (*OUTPUT_FILES, "summary.json")
        }

    def write(self, result: BatchResult) -> None:
        self.write_batch(result.envelopes, result.rejections, result.skips, result.routing)

    def write_batch(
        self,
        envelopes: Iterable[Envelope],
        rejections: Iterable[BaseModel] = (),
        skips: Iterable[BaseModel] = (),
        routing: Iterable[BaseModel] = (),
    ) -> None:
        """Append one batch all or nothing, so a retried write never doubles a row."""
        lines: dict[str, list[str]] = {name: [] for name in OUTPUT_FILES}
        for envelope in envelopes:
            name = "proposals.jsonl" if isinstance(envelope, LinkProposal) else "reviews.jsonl"
            lines[name].append(_line(dump_envelope(envelope)))
        for record in rejections:
            lines["rejected.jsonl"].append(_line(record.model_dump(mode="json", exclude_none=True)))
        for record in skips:
            lines["skipped.jsonl"].append(_line(record.model_dump(mode="json", exclude_none=True)))
        for record in routing:
            lines["routing.jsonl"].append(_line(record.model_dump(mode="json")))
        marks = {name: handle.tell() for name, handle in self._handles.items()}
        try:
            for name, chunk in lines.items():
                if chunk:
                    self._handles[name].write("".join(chunk))
                    self._handles[name].flush()
        except BaseException:
            for name, handle in self._handles.items():
                handle.seek(marks[name])
                handle.truncate()
            raise

    def commit(self, summary: BaseModel) -> None:
        """Close every file, write the summary last, then swap the directory into place."""
        for handle in self._handles.values():
            handle.flush()
            os.fsync(handle.fileno())
            handle.close()
        with _create(self.staging / "summary.json") as handle:
            handle.write(summary.model_dump_json(indent=2) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        swap_into_place(self.staging, self.out_dir)

    def abort(self) -> None:
        for handle in self._handles.values():
            handle.close()
        shutil.rmtree(self.staging, ignore_errors=True)

    def __enter__(self) -> FileSink:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self.abort()


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False) + "\n"


def _create(path: Path) -> IO[str]:
    """A new file, refused if anything (a link included) is already there."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    return os.fdopen(os.open(path, flags, 0o644), "w", encoding="utf-8")


def swap_into_place(staging: Path, target: Path) -> None:
    """Rename `staging` to `target`; whatever was at `target` (a directory, a file, a link,
    which is not followed) is moved aside first and removed after."""
    old = None
    if target.is_symlink() or target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
        os.rename(target, old / "previous")
    os.rename(staging, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
