"""Golden sets: loading them, cutting dev rows from links, and turning rows into sections.

Golden rows go through the same validation as a run: each is written as a queue row and
parsed by `ingest.parse_line`, so eval scores exactly what `run` would see.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from librarian.errors import InputError
from librarian.pipeline.ingest import parse_line
from librarian.schemas.evaluation import (
    GOLDEN_SCHEMA_VERSION,
    GoldenExpected,
    GoldenInput,
    GoldenProvenance,
    GoldenRow,
    TextStyle,
)
from librarian.schemas.records import Section
from librarian.training.links import LinkedSection

_ROWS = TypeAdapter(list[GoldenRow])
GOLDEN_COMMIT = "0" * 40
GOLDEN_TIME = "2026-01-01T00:00:00Z"


class GoldenError(InputError):
    """A golden file is unreadable or a row of it is malformed (the message names the row)."""


def load_golden(path: Path) -> list[GoldenRow]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GoldenError(f"golden set {path} cannot be read: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise GoldenError(f"golden set {path} is not JSON: {exc.msg} (line {exc.lineno})") from exc
    if not isinstance(data, list):
        raise GoldenError(f"golden set {path} must be a JSON list of rows")
    try:
        rows = _ROWS.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise GoldenError(f"golden set {path}: row {where}: {first['msg']}") from exc
    seen: set[str] = set()
    for row in rows:
        if row.id in seen:
            raise GoldenError(f"golden set {path}: row id {row.id!r} appears twice")
        seen.add(row.id)
    return rows


def dump_golden(rows: Sequence[GoldenRow]) -> str:
    return json.dumps([r.model_dump(mode="json", exclude_none=True) for r in rows], indent=1) + "\n"


# Our framework ids that the upstream harness names itself; any other is "OTHER" there.
_UPSTREAM = {"nist_800_53": "NIST_800_53", "wstg": "WSTG", "owasp_cheat_sheets": "OWASP_CHEATSHEET"}
GROUND_TRUTH = "existing OpenCRE DB mapping (links.jsonl), section text from section_texts.jsonl"


def rows_from_links(sections: Iterable[LinkedSection]) -> list[GoldenRow]:
    """One `positive` row per linked section, in the upstream format: id
    `gold:<framework>:<section>:<style>`, expected linked to any of its CREs."""
    rows: list[GoldenRow] = []
    seen: dict[str, int] = {}
    for s in sections:
        base = f"gold:{s.framework_id}:{s.section_id}:{s.style}"
        # Some standards reuse a section id for two texts: keep ids unique, and stable.
        seen[base] = seen.get(base, 0) + 1
        rows.append(
            GoldenRow(
                id=base if seen[base] == 1 else f"{base}#{seen[base]}",
                schema_version=GOLDEN_SCHEMA_VERSION,
                slice="positive",
                input=GoldenInput(
                    text=s.text, source_standard=_UPSTREAM.get(s.framework_id, "OTHER")
                ),
                expected=GoldenExpected(decision="linked", cre_ids=sorted(s.cre_ids)),
                provenance=GoldenProvenance(
                    ground_truth_source=GROUND_TRUTH, section_path=s.section_id
                ),
            )
        )
    return rows


def framework_of(row: GoldenRow) -> str:
    """The framework a row comes from: named in its id (`gold:<framework>:...`, the upstream
    convention), else its source standard, else hand-written."""
    parts = row.id.split(":")
    if len(parts) >= 3 and parts[0] == "gold":
        return parts[1].split("#")[0]
    return row.input.source_standard or "(handwritten)"


def style_of(row: GoldenRow) -> TextStyle:
    """prose or title: named by the id's last part (`...:prose`), else read off the text:
    a title is short (at most 12 words) and does not end a sentence."""
    last = row.id.split(":")[-1].split("#")[0]
    if last in ("prose", "title"):
        return "prose" if last == "prose" else "title"
    text = row.input.text.strip()
    return "title" if len(text.split()) <= 12 and not text.endswith((".", "!", "?")) else "prose"


def source_of(row: GoldenRow) -> str:
    """The source a golden row belongs to: its `source_standard`, refined by the framework
    its id names (the upstream `gold:<standard>:...` convention), since the upstream enum
    calls every standard it does not list OTHER."""
    return f"{row.input.source_standard or 'none'}/{framework_of(row)}"


def reviewed_first(rows: Sequence[GoldenRow], k: int) -> tuple[list[GoldenRow], list[GoldenRow]]:
    """The first `k` rows of each source, in file order, whose expected decision is
    `linked` (a team reviews those first), and the rest."""
    taken: dict[str, int] = {}
    reviewed: list[GoldenRow] = []
    rest: list[GoldenRow] = []
    for row in rows:
        source = source_of(row)
        if row.expected.decision == "linked" and row.expected.cre_ids and taken.get(source, 0) < k:
            taken[source] = taken.get(source, 0) + 1
            reviewed.append(row)
        else:
            rest.append(row)
    return reviewed, rest


def queue_row_of(row: GoldenRow) -> dict[str, object]:
    """The queue row a golden row stands for; a cited CRE is written into the text. Rows
    of one section (`provenance.section_path`) share a locator: one item of their source."""
    text = row.input.text
    ref = row.input.explicit_cre_ref
    if ref and ref not in text:
        text = f"{text}\nSee CRE {ref}."
    headings = [row.input.title_hint] if row.input.title_hint else []
    source = source_of(row)
    return {
        "chunk_id": f"golden:{row.id}",
        "artifact_id": f"golden:{source}",
        "source_type": "github",
        "source_repo": f"golden/{source}",
        "source_commit_sha": GOLDEN_COMMIT,
        "source_committed_at": GOLDEN_TIME,
        "locator_kind": "repo_path",
        "locator_path": (row.provenance.section_path if row.provenance else None) or row.id,
        "span_heading_path": json.dumps(headings),
        "text": text,
        "llm_label": "KNOWLEDGE",
    }


def sections_of(rows: Sequence[GoldenRow]) -> list[Section]:
    """Validate every golden row as a run would; a row a run would refuse is a golden error."""
    out: list[Section] = []
    for number, row in enumerate(rows, start=1):
        parsed = parse_line(number, json.dumps(queue_row_of(row)).encode())
        if not isinstance(parsed, Section):
            raise GoldenError(f"golden row {row.id!r} would not reach the linker: {parsed.message}")
        out.append(parsed)
    return out
