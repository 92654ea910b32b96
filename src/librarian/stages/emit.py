"""Stage 6: dry-run output files that appear complete or not at all.

Each file is written as `NAME.part` and renamed into place only when the run
has accounted for every line; `summary.json` is renamed last. A crashed run
leaves `.part` files, never output that looks whole.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from pydantic import BaseModel

from librarian.contracts.envelopes import Envelope, LinkProposal, dump_envelope

OUTPUT_FILES = (
    "proposals.jsonl",
    "reviews.jsonl",
    "rejected.jsonl",
    "skipped.jsonl",
    "routing.jsonl",  # beside the envelopes: which hub collections each section searched
)


class OutputWriter:
    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        out_dir.mkdir(parents=True, exist_ok=True)
        for name in (*OUTPUT_FILES, "summary.json"):
            # A previous run's files under the same run id must not survive beside ours.
            (out_dir / name).unlink(missing_ok=True)
        self._handles: dict[str, IO[str]] = {
            name: (out_dir / f"{name}.part").open("w", encoding="utf-8") for name in OUTPUT_FILES
        }

    def paths(self) -> dict[str, str]:
        return {
            name.split(".")[0]: str(self.out_dir / name) for name in (*OUTPUT_FILES, "summary.json")
        }

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
        """Make every file visible at once: data files first, the summary last."""
        for name, handle in self._handles.items():
            handle.flush()
            os.fsync(handle.fileno())
            handle.close()
            os.replace(self.out_dir / f"{name}.part", self.out_dir / name)
        write_atomic(self.out_dir / "summary.json", summary.model_dump_json(indent=2) + "\n")

    def abort(self) -> None:
        for name, handle in self._handles.items():
            handle.close()
            (self.out_dir / f"{name}.part").unlink(missing_ok=True)

    def __enter__(self) -> OutputWriter:
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


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".part")
    with tmp.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
