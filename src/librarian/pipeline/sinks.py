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
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from pydantic import BaseModel

from librarian.pipeline.accounting import summary_markdown
from librarian.schemas.envelopes import Envelope, Link, LinkProposal, envelope_line
from librarian.schemas.records import BatchResult, Finished, RunSummary
from librarian.text import markdown_cell

OUTPUT_FILES = (
    "proposals.jsonl",
    "reviews.jsonl",
    "rejected.jsonl",
    "skipped.jsonl",
    "routing.jsonl",  # beside the envelopes: which hub collections each section searched
)


class FileSink:
    stage = "write"

    def __init__(self, out_dir: Path, names: Mapping[str, str] | None = None) -> None:
        """`names`: each CRE's name by id, for summary.md (a row linked by a cited id has
        no candidates to name it)."""
        self.out_dir = out_dir
        self.names = names or {}
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        self.staging = Path(
            tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".partial", dir=out_dir.parent)
        )
        self._handles: dict[str, IO[str]] = {
            name: _create(self.staging / name) for name in OUTPUT_FILES
        }
        self._rows: list[str] = []  # summary.md: one line a row, in input order
        self._more_rows = 0

    def paths(self) -> dict[str, str]:
        paths = {name.split(".")[0]: str(self.out_dir / name) for name in OUTPUT_FILES}
        return paths | {
            "summary": str(self.out_dir / "summary.json"),
            "summary_md": str(self.out_dir / "summary.md"),
        }

    def write(self, batch: Finished) -> BatchResult:
        result = batch.result
        self.write_batch(
            result.envelopes, result.rejections, result.skips, result.routing, result.cut_chunks
        )
        return result

    def write_batch(
        self,
        envelopes: Iterable[Envelope],
        rejections: Iterable[BaseModel] = (),
        skips: Iterable[BaseModel] = (),
        routing: Iterable[BaseModel] = (),
        cut: Collection[str] = (),
    ) -> None:
        """Append one batch all or nothing, so a retried write never doubles a row; `cut`:
        the chunks whose text was cut to fit a model (summary.md says so)."""
        envelopes, rejections, skips = list(envelopes), list(rejections), list(skips)
        lines: dict[str, list[str]] = {name: [] for name in OUTPUT_FILES}
        for envelope in envelopes:
            name = "proposals.jsonl" if isinstance(envelope, LinkProposal) else "reviews.jsonl"
            lines[name].append(envelope_line(envelope))
        for record in rejections:
            lines["rejected.jsonl"].append(_line(record.model_dump(mode="json", exclude_none=True)))
        for record in skips:
            lines["skipped.jsonl"].append(_line(record.model_dump(mode="json", exclude_none=True)))
        for record in routing:
            lines["routing.jsonl"].append(record.model_dump_json() + "\n")
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
        self._add_rows(envelopes, rejections, skips, set(cut))

    def _add_rows(
        self,
        envelopes: Iterable[Envelope],
        rejections: Iterable[BaseModel],
        skips: Iterable[BaseModel],
        cut: Collection[str],
    ) -> None:
        rows = [envelope_row(e, e.chunk_id in cut, self.names) for e in envelopes]
        rows += [note_row(r, "rejected") for r in rejections]
        rows += [note_row(s, "skipped") for s in skips]
        room = max(0, MAX_SUMMARY_ROWS - len(self._rows))
        self._rows += rows[:room]
        self._more_rows += len(rows) - len(rows[:room])

    def commit(self, summary: RunSummary) -> None:
        """Close every file, write the summary last, then swap the directory into place."""
        for handle in self._handles.values():
            handle.flush()
            os.fsync(handle.fileno())
            handle.close()
        with _create(self.staging / "summary.md") as handle:
            handle.write(self.markdown(summary))
        with _create(self.staging / "summary.json") as handle:
            handle.write(summary.model_dump_json(indent=2) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        swap_into_place(self.staging, self.out_dir)

    def markdown(self, summary: RunSummary) -> str:
        """The summary, then what happened to each row."""
        lines = [summary_markdown(summary), "", "## Rows", "", ROWS_HEADER, "|---|---|---|---|---|"]
        lines += self._rows
        if self._more_rows:
            lines += ["", f"… and {self._more_rows} more rows: see the JSONL files."]
        return "\n".join(lines) + "\n"

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


# summary.md is for reading, the same size for any input: the first rows, then a count
# (every row is in the JSONL files; every source in summary.json).
MAX_SUMMARY_ROWS = 200
ROWS_HEADER = "| row | outcome | reason | top CRE | confidence |"


def envelope_row(
    envelope: Envelope, cut: bool = False, hub_names: Mapping[str, str] | None = None
) -> str:
    """One row of summary.md: where the section is, what was decided, the top CRE and its
    name; `cut`: its text was cut to fit a model, which read only the start."""
    where = envelope.knowledge.locator.id or envelope.chunk_id
    names = {**(hub_names or {}), **{c.cre_id: c.cre_name for c in envelope.retrieval.candidates}}
    top: Link | None
    if isinstance(envelope, LinkProposal):
        outcome, reason, top = "linked", str(envelope.links[0].link_type), envelope.links[0]
    else:
        flags = envelope.update_detection.adversarial_flags
        reason = str(envelope.reason_code) + (f" ({', '.join(flags)})" if flags else "")
        outcome = "review"
        top = envelope.suggested_links[0] if envelope.suggested_links else None
    cre = f"{top.cre_id} {names.get(top.cre_id, '')}".strip() if top else "none"
    reason += "; cut to fit the model" if cut else ""
    confidence = f"{top.confidence:.3f}" if top else ""
    return "| " + " | ".join(_cell(c) for c in (where, outcome, reason, cre, confidence)) + " |"


def note_row(note: BaseModel, outcome: str) -> str:
    data = note.model_dump(mode="json")
    where = f"line {data.get('line')}" + (f" ({data['chunk_id']})" if data.get("chunk_id") else "")
    reason = f"{data.get('reason')}: {data.get('message', '')}"
    return "| " + " | ".join(_cell(c) for c in (where, outcome, reason, "", "")) + " |"


def _cell(text: str) -> str:
    """One cell of a row: nothing upstream wrote (chunk ids, locators, CRE names) can
    become HTML, a link or a cell break."""
    return markdown_cell(text)


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
