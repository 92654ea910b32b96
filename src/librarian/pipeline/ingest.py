"""C.0 ingest: validate each raw line (knowledge-queue JSONL) into a Section.

Every non-blank line becomes exactly one of Section, Rejection or Skip: nothing
is dropped silently, and one bad row never stops the batch.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from librarian.schemas.envelopes import Locator, Source
from librarian.schemas.inputs import (
    ACCEPTED_LABELS,
    EMPTY_TEXT_ERROR,
    MISSING_PROVENANCE_ERROR,
    KnowledgeItem,
    QueueRow,
)
from librarian.schemas.records import RejectCode, Rejection, Section, Skip, SkipCode, rejected
from librarian.text import content_hash, value_problem

_KNOWLEDGE_ITEM_KEYS = frozenset({"content", "event_id", "filtered_at", "locator"})
_QUEUE_ROW_KEYS = frozenset({"llm_label", "source_type", "span_heading_path"})

Parsed = Section | Rejection | Skip
M = TypeVar("M", bound=BaseModel)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def parse_line(line: int, raw: bytes) -> Parsed:
    """Validate one raw line into a Section, or say exactly why not."""
    obj = decode_line(line, raw)
    if isinstance(obj, Rejection):
        return obj
    return _parse_object(line, obj)


def parse_item(line: int, item: dict[str, Any]) -> Parsed:
    """A KnowledgeItem a plain shape built (`pipeline/plain.py`), validated as one: no JSON
    to decode, its shape not sniffed; refused for what a decoded line is (a lone surrogate,
    a NUL, nesting too deep)."""
    if problem := _value_problem(line, item):
        return problem
    return _parse_object(line, item, knowledge_item=True)


def _parse_object(line: int, obj: dict[str, Any], knowledge_item: bool = False) -> Parsed:
    chunk_id = obj.get("chunk_id") if isinstance(obj.get("chunk_id"), str) else None
    keys = obj.keys()
    try:
        if knowledge_item or keys & _KNOWLEDGE_ITEM_KEYS:
            return _parse_knowledge_item(line, obj, chunk_id)
        if keys & _QUEUE_ROW_KEYS:
            return _parse_queue_row(line, obj, chunk_id)
    except (ValueError, TypeError, RecursionError, OverflowError) as exc:
        # A row the validators let through but a record will not hold: refused, not raised.
        why = f"cannot be read: {type(exc).__name__}: {first_line(exc)}"
        return rejected(line, RejectCode.INVALID_FIELD, why, chunk_id)
    return rejected(line, RejectCode.UNKNOWN_SHAPE, _UNKNOWN_SHAPE, chunk_id)


_UNKNOWN_SHAPE = (
    "neither a queue row (needs llm_label, source_type, ...) "
    "nor a KnowledgeItem envelope (needs content, locator, ...)"
)


def queue_row_from_line(line: int, raw: bytes) -> dict[str, Any] | Rejection | Skip:
    """What `queue load` stores for one line: a queue row as it is (the run that drains
    the table validates it, as upstream's rows are), or a KnowledgeItem converted to the
    queue-row shape; a line that is neither is rejected, never stored hollow."""
    obj = decode_line(line, raw)
    if isinstance(obj, Rejection):
        return obj
    chunk_id = obj.get("chunk_id") if isinstance(obj.get("chunk_id"), str) else None
    if obj.keys() & _QUEUE_ROW_KEYS:
        return obj
    if not obj.keys() & _KNOWLEDGE_ITEM_KEYS:
        return rejected(line, RejectCode.UNKNOWN_SHAPE, _UNKNOWN_SHAPE, chunk_id)
    section = parse_line(line, raw)
    if not isinstance(section, Section):
        return section
    return _as_queue_row(section)


def _as_queue_row(section: Section) -> dict[str, Any] | Rejection:
    source, locator = section.source, section.locator
    headings = list(section.heading_path) or ([section.title_hint] if section.title_hint else [])
    row: dict[str, Any] = {
        "content_hash": section.content_hash,
        "chunk_id": section.chunk_id,
        "artifact_id": section.artifact_id,
        "pipeline_run_id": section.upstream_run_id,
        "source_type": source.type,
        "source_committed_at": source.committed_at.isoformat(),
        "span_heading_path": json.dumps(headings),
        "span_index": section.span_index,
        "text": section.text,
        "llm_label": section.source_label,
        "created_at": source.committed_at.isoformat(),
    }
    if source.type == "github":
        row |= {
            "source_repo": source.repo,
            "source_commit_sha": source.commit_sha,
            "locator_kind": "repo_path",
            "locator_path": locator.path,
        }
    elif source.type == "rss":
        row |= {"feed_url": source.url, "post_guid": locator.id or locator.url}
    else:
        why = (
            f"a KnowledgeItem of source type {source.type!r} has no queue-row form (the "
            "table holds github and rss rows); run the file itself: `librarian run FILE`"
        )
        return rejected(section.line, RejectCode.INVALID_FIELD, why, section.chunk_id, "source")
    return {k: v for k, v in row.items() if v is not None}


def decode_line(line: int, raw: bytes) -> dict[str, Any] | Rejection:
    """One raw line as a JSON object, or why it is none."""
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        why = f"bytes are not UTF-8 (at byte {exc.start}: {exc.reason})"
        return rejected(line, RejectCode.INVALID_ENCODING, why)
    try:
        obj = json.loads(decoded)
    except json.JSONDecodeError as exc:
        why = f"invalid JSON: {exc.msg} (column {exc.colno})"
        return rejected(line, RejectCode.INVALID_JSON, why)
    except RecursionError:
        return rejected(line, RejectCode.INVALID_JSON, "invalid JSON: nested too deeply")
    except ValueError as exc:  # e.g. an integer of thousands of digits
        return rejected(line, RejectCode.INVALID_JSON, f"invalid JSON: {first_line(exc)}")
    if problem := _value_problem(line, obj):
        return problem
    if not isinstance(obj, dict):
        why = f"expected a JSON object, got {type(obj).__name__}"
        return rejected(line, RejectCode.NOT_AN_OBJECT, why)
    return obj


def _value_problem(line: int, value: Any) -> Rejection | None:
    if problem := value_problem(value):
        code = RejectCode.INVALID_JSON if problem.too_deep else RejectCode.INVALID_ENCODING
        return rejected(line, code, problem.message)
    return None


def _parse_queue_row(line: int, obj: dict[str, Any], chunk_id: str | None) -> Parsed:
    label = obj.get("llm_label")
    skip = None
    if isinstance(label, str) and label not in ACCEPTED_LABELS:
        skip = SkipCode.LABEL_NOT_OURS, f"llm_label {label!r} is not KNOWLEDGE or UNCERTAIN"
    row = _validate(QueueRow, line, obj, chunk_id, skip)
    if not isinstance(row, QueueRow):
        return row
    headings = _heading_path(row.span_heading_path)
    if headings is None:
        why = "span_heading_path must be a JSON-encoded list of strings"
        return rejected(line, RejectCode.INVALID_FIELD, why, row.chunk_id, "span_heading_path")
    # rss rows carry no commit time: fall back to when the filter wrote the row.
    committed_at = row.source_committed_at or row.created_at
    if committed_at is None:
        why = "no source_committed_at and no created_at to fall back to"
        code = RejectCode.MISSING_PROVENANCE
        return rejected(line, code, why, row.chunk_id, "source_committed_at")
    title = headings[-1] if headings else None
    try:
        source, locator = _queue_row_provenance(row, committed_at, title)
    except ValidationError as exc:
        return _provenance_refused(line, obj, row.chunk_id, exc)
    return Section(
        line=line,
        chunk_id=row.chunk_id,
        artifact_id=row.artifact_id,
        input_shape="queue_row",
        text=row.text,
        title_hint=title,
        heading_path=tuple(headings),
        source=source,
        locator=locator,
        upstream_run_id=row.pipeline_run_id,
        source_label="UNCERTAIN" if row.llm_label == "UNCERTAIN" else "KNOWLEDGE",
        content_hash=content_hash(row.text),
        span_index=row.span_index,
        collections=tuple(row.collections) if row.collections else None,
    )


# The queue row's column behind each field of the provenance it becomes.
_PROVENANCE_COLUMN = {
    "repo": "source_repo",
    "commit_sha": "source_commit_sha",
    "committed_at": "source_committed_at",
    "url": "feed_url",
    "id": "locator_path",
    "path": "locator_path",
}


def _provenance_refused(
    line: int, obj: dict[str, Any], chunk_id: str, exc: ValidationError
) -> Rejection:
    """A row whose columns are each valid but do not make a valid provenance (a commit sha
    too short for the RFC, say): rejected naming the column, its value's type and why."""
    first = exc.errors()[0]
    field = str(first["loc"][0]) if first["loc"] else ""
    column = _PROVENANCE_COLUMN.get(field, field or "(row)")
    value = obj.get(column)
    why = f"{column} ({type(value).__name__} {str(value)[:40]!r}): {first['msg']}"
    return rejected(line, RejectCode.INVALID_FIELD, why, chunk_id, column)


def _queue_row_provenance(
    row: QueueRow, committed_at: datetime, title: str | None
) -> tuple[Source, Locator]:
    """A github row: the repository at a commit, a repo_path locator. An rss row: the feed,
    and a feed_item locator whose url is the post guid when it is a URL, else the feed."""
    if row.source_type == "github":
        source = Source(
            type="github",
            repo=row.source_repo,
            commit_sha=row.source_commit_sha,
            committed_at=committed_at,
        )
        path = row.locator_path or ""
        return source, Locator(kind="repo_path", id=path, path=path, title=title)
    guid = row.post_guid or ""
    post_url = guid if guid.startswith(("http://", "https://")) else row.feed_url
    source = Source(type="rss", url=row.feed_url, committed_at=committed_at)
    return source, Locator(kind="feed_item", id=guid or post_url or "", url=post_url, title=title)


def _parse_knowledge_item(line: int, obj: dict[str, Any], chunk_id: str | None) -> Parsed:
    status = obj.get("status")
    skip = None
    if isinstance(status, str) and status in ("rejected", "deferred"):
        skip = SkipCode.STATUS_NOT_ACCEPTED, f"status {status!r}: only accepted items are linked"
    item = _validate(KnowledgeItem, line, obj, chunk_id, skip)
    if not isinstance(item, KnowledgeItem):
        return item
    # committed_at is required downstream; an envelope without it was at least filtered then.
    committed_at: datetime = item.source.committed_at or item.filtered_at
    source = Source(**{**item.source.model_dump(), "committed_at": committed_at})
    loc = item.locator
    where = loc.id or (loc.path if loc.kind == "repo_path" else loc.url) or ""
    locator = Locator(**{**loc.model_dump(), "id": where})
    return Section(
        line=line,
        chunk_id=item.chunk_id,
        artifact_id=item.artifact_id,
        input_shape="knowledge_item",
        text=item.content.text,
        title_hint=item.content.title_hint or loc.title,
        heading_path=tuple(item.section_path or ()),
        source=source,
        locator=locator,
        security_summary=item.filter.security_summary if item.filter else None,
        upstream_run_id=item.pipeline_run_id,
        content_hash=content_hash(item.content.text),
        collections=tuple(item.collections) if item.collections else None,
    )


_ERROR_PRIORITY = {MISSING_PROVENANCE_ERROR: 0, EMPTY_TEXT_ERROR: 1, "missing": 2}


def _validate(
    model: type[M],
    line: int,
    obj: dict[str, Any],
    chunk_id: str | None,
    skip: tuple[SkipCode, str] | None = None,
) -> M | Rejection | Skip:
    """The row as `model`, or why not: skipped (not for us), else rejected (not valid)."""
    if skip is not None:
        return Skip(line=line, chunk_id=chunk_id, reason=skip[0], message=skip[1])
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        errors = sorted(exc.errors(), key=lambda e: _ERROR_PRIORITY.get(e["type"], 9))
        first = errors[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        code = {
            MISSING_PROVENANCE_ERROR: RejectCode.MISSING_PROVENANCE,
            EMPTY_TEXT_ERROR: RejectCode.EMPTY_TEXT,
            "missing": RejectCode.MISSING_FIELD,
        }.get(first["type"], RejectCode.INVALID_FIELD)
        detail = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(row)'}: {e['msg']}" for e in errors[:5]
        )
        return rejected(line, code, f"{model.__name__} {detail}", chunk_id, field)


def _heading_path(encoded: str | None) -> list[str] | None:
    if encoded is None or not encoded.strip():
        return []
    try:
        value = json.loads(encoded)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return None
    if not isinstance(value, list) or not all(isinstance(h, str) for h in value):
        return None
    if value_problem(value) is not None:
        return None
    return [h for h in value if h.strip()]


def section_from_text(text: str, title: str | None = None) -> Section:
    """One free text as a Section, for `librarian explain` and `route`."""
    now = datetime.now(UTC)
    return Section(
        line=1,
        chunk_id="explain",
        artifact_id="explain",
        input_shape="knowledge_item",
        text=text,
        title_hint=title,
        source=Source(type="url", url="about:explain", committed_at=now),
        locator=Locator(kind="url", id="about:explain", url="about:explain", title=title),
        content_hash=content_hash(text),
    )


def query_text(section: Section) -> str:
    """What the models read: the title hint first when the text does not already carry it."""
    title = section.title_hint
    if title and title.strip() and title.strip() not in section.text:
        return f"{title.strip()}\n{section.text}"
    return section.text
