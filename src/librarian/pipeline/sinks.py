"""Sinks: where a batch's outcomes go. `FileSink` writes the run's files, which appear
complete or not at all, and never over a good run (the database sink is `store/sink.py`).

A run writes into a fresh staging directory (`.NAME.XXXX.partial` beside a new `--out`,
`.librarian.XXXX.partial` inside an existing one; made with mkdtemp: nothing planted there
in advance can be written through) and moves its files into place only when every line is
accounted for. A failed or killed run leaves the previous outputs as they were (and a
`.partial` directory, removed on failure). A run replaces only what a run wrote: a new
`--out` is its staging directory renamed; an existing one must be empty or an earlier
run's (its `manifest.json` names the files that run wrote; an older version's folder,
without one, holds only its summary.json and its output files), and only those files are
replaced, each renamed over its predecessor. A folder that holds anything else (an input
included) is refused before the run starts. Files are opened with O_EXCL | O_NOFOLLOW and
renames never follow a link: a symlink at `--out` is replaced, not written through.
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

from librarian.errors import UsageError
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
SUMMARY_FILES = ("summary.json", "summary.md")
RUN_FILES = (*OUTPUT_FILES, *SUMMARY_FILES)  # what a run writes, beside its manifest
MANIFEST = "manifest.json"  # the files a run wrote: what the next run into --out replaces
# An older version's folder has no manifest: its summary.json says what it is, and it holds
# only a run's files (and the `NAME.part` files versions before the staging directory left
# when a run failed).
OLDER_RUN_FILES = frozenset(RUN_FILES) | {f"{name}.part" for name in RUN_FILES}
STAGING_PREFIX, STAGING_SUFFIX = ".librarian.", ".partial"  # inside an existing --out
MAX_MANIFEST_BYTES = 64 * 1024


class FileSink:
    stage = "write"

    def __init__(self, out_dir: Path, names: Mapping[str, str] | None = None) -> None:
        """`names`: each CRE's name by id, for summary.md (a row linked by a cited id has
        no candidates to name it)."""
        self.out_dir = out_dir
        self.names = names or {}
        check_out_dir(out_dir)
        self.into_folder = _real_dir(out_dir)  # files renamed into it, else the folder whole
        self.staging = _staging_for(out_dir)
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
            "manifest": str(self.out_dir / MANIFEST),
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
        """Close every file, write the summary last, then move the files into place."""
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
        if self.into_folder:
            replace_files(self.staging, self.out_dir, summary.run_id)
            self.staging.rmdir()  # every file moved out of it
        else:
            _write_manifest(self.staging, summary.run_id, RUN_FILES)
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
    """Rename `staging` to `target`, where nothing is, an empty directory, or a link (the
    link replaced, its target never followed or touched). Anything else there fails the
    rename: nothing is deleted."""
    if target.is_symlink():
        target.unlink()
    os.rename(staging, target)


def replace_files(staging: Path, out_dir: Path, run_id: str) -> None:
    """Move a run's files from `staging` (inside `out_dir`) into `out_dir`, each renamed
    over its predecessor, and remove the earlier run's files this run does not write. The
    manifest goes first, naming both runs' files: a run killed half-way leaves a folder
    the next run recognises."""
    refuse_in_the_way(out_dir, "output folder")  # anything that came while the run ran
    earlier = earlier_run_files(out_dir) or frozenset()
    older = sorted(n for n in earlier - set(RUN_FILES) if os.path.lexists(out_dir / n))
    _write_manifest(staging, run_id, [*RUN_FILES, *older])
    os.replace(staging / MANIFEST, out_dir / MANIFEST)
    for name in RUN_FILES:
        os.replace(staging / name, out_dir / name)
    if older:
        for name in older:
            (out_dir / name).unlink(missing_ok=True)
        _write_manifest(staging, run_id, RUN_FILES)
        os.replace(staging / MANIFEST, out_dir / MANIFEST)


def _write_manifest(folder: Path, run_id: str, files: Iterable[str]) -> None:
    manifest = {"written_by": "librarian", "run_id": run_id, "files": list(files)}
    with _create(folder / MANIFEST) as handle:
        handle.write(json.dumps(manifest, indent=1) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _staging_for(out_dir: Path) -> Path:
    """A fresh staging directory on `out_dir`'s file system: inside it when it is a folder
    (its files are then renamed into it: `--out .` and a mount point included), else
    beside it (renamed to it whole)."""
    if _real_dir(out_dir):
        return Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, suffix=STAGING_SUFFIX, dir=out_dir))
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    name = out_dir.absolute().name
    return Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".partial", dir=out_dir.parent))


def _real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def earlier_run_files(out_dir: Path) -> frozenset[str] | None:
    """The files of an earlier run in `out_dir`, which the next run may replace: those its
    manifest names (only names a run writes), or, without a manifest, an older version's
    (its summary.json says what the folder is). None: no earlier run's folder."""
    manifest = out_dir / MANIFEST
    if os.path.lexists(manifest):
        return _manifest_files(manifest)
    if os.path.lexists(out_dir / "summary.json"):
        return OLDER_RUN_FILES
    return None


def _manifest_files(manifest: Path) -> frozenset[str] | None:
    """The run files a manifest names; None for a file that is not a librarian manifest
    (a link, another program's manifest.json, one cut short)."""
    try:
        fd = os.open(manifest, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            found = json.loads(handle.read(MAX_MANIFEST_BYTES + 1)[:MAX_MANIFEST_BYTES])
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or found.get("written_by") != "librarian":
        return None
    files = found.get("files")
    if not isinstance(files, list):
        return None
    return frozenset(RUN_FILES) & {name for name in files if isinstance(name, str)}


def in_the_way(out_dir: Path) -> list[str]:
    """What at `out_dir` a run may not replace, by name (empty: a run may write there): a
    file at `out_dir` itself, or in a folder, everything but an earlier run's files, its
    manifest and runs' staging directories. A link at `out_dir` is replaced, not followed."""
    if out_dir.is_symlink() or not os.path.lexists(out_dir):
        return []
    if not out_dir.is_dir():
        return [out_dir.name]
    replaceable = earlier_run_files(out_dir)
    allowed = replaceable | {MANIFEST} if replaceable is not None else frozenset()
    blocking = []
    with os.scandir(out_dir) as entries:
        for entry in entries:
            folder = entry.is_dir(follow_symlinks=False)
            staging = entry.name.startswith(STAGING_PREFIX) and entry.name.endswith(STAGING_SUFFIX)
            if (folder and staging) or (entry.name in allowed and not folder):
                continue
            blocking.append(entry.name + ("/" if folder else ""))
    return sorted(blocking)


def refuse_in_the_way(out_dir: Path, what: str) -> None:
    """Refuse a folder that holds what no run wrote, naming it (a run never deletes it)."""
    blocking = in_the_way(out_dir)
    if not blocking:
        return
    shown = ", ".join(blocking[:5]) + (
        f" and {len(blocking) - 5} more" if len(blocking) > 5 else ""
    )
    raise UsageError(
        f"{what} {out_dir} holds files no librarian run wrote ({shown}): a run replaces only "
        f"an earlier run's files (named in its {MANIFEST}); name a new or empty folder"
    )


def check_out_dir(out_dir: Path, inputs: Iterable[Path] = (), what: str = "output folder") -> Path:
    """`out_dir`, or the refusal, before the run starts, of an output folder it would have
    to delete something from: one that holds an input (at any depth), or anything but an
    earlier run's files; or an existing folder it cannot write in."""
    where = out_dir.resolve()
    for given in inputs:
        if given.resolve().is_relative_to(where):
            raise UsageError(
                f"{what} {out_dir} holds the input {given}: a run never replaces its input; "
                "name another folder"
            )
    refuse_in_the_way(out_dir, what)
    if _real_dir(out_dir):
        try:
            with tempfile.TemporaryFile(dir=out_dir):
                pass
        except OSError as exc:
            raise UsageError(f"{what} {out_dir}: cannot write in it ({exc.strerror})") from exc
    return out_dir


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
