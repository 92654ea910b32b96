from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from librarian.pipeline.dedup import ChunkRegistry
from librarian.pipeline.ingest import parse_line
from librarian.pipeline.sources import read_batch
from librarian.schemas.records import RejectCode, Rejection, Section, Skip, SkipCode
from tests.rows import SHA, item, row


def parse(obj: Any) -> Section | Rejection | Skip:
    return parse_line(7, json.dumps(obj).encode())


def test_github_queue_row_becomes_section_with_provenance() -> None:
    section = parse(row())
    assert isinstance(section, Section)
    assert section.source.type == "github" and section.source.commit_sha == SHA
    assert section.locator.kind == "repo_path" and section.locator.path == "docs/x.md"
    assert section.heading_path == ("Guide", "Sessions")
    assert section.title_hint == "Sessions"
    assert section.line == 7


def test_rss_row_falls_back_to_created_at_and_uses_post_url() -> None:
    rss = row(
        source_type="rss",
        source_repo=None,
        source_commit_sha=None,
        source_committed_at=None,
        locator_path=None,
        feed_url="https://example.org/feed",
        post_guid="https://example.org/p/1",
    )
    section = parse(rss)
    assert isinstance(section, Section)
    assert section.source.url == "https://example.org/feed"
    assert section.source.committed_at.isoformat().startswith("2026-11-02")
    assert section.locator.kind == "feed_item" and section.locator.url == "https://example.org/p/1"


def test_knowledge_item_becomes_section() -> None:
    section = parse(item())
    assert isinstance(section, Section)
    assert section.input_shape == "knowledge_item"
    assert section.security_summary == "crypto"
    assert section.title_hint == "Title"
    # no committed_at in the envelope: falls back to filtered_at
    assert section.source.committed_at.isoformat().startswith("2026-11-03")


def test_extra_queue_columns_are_tolerated() -> None:
    assert isinstance(parse(row(some_new_column=5)), Section)


@pytest.mark.parametrize(
    ("raw", "code", "field"),
    [
        (b'{"chunk_id": ', RejectCode.INVALID_JSON, None),
        (b"[1, 2]", RejectCode.NOT_AN_OBJECT, None),
        (b'"just a string"', RejectCode.NOT_AN_OBJECT, None),
        (b'{"a": 1}', RejectCode.UNKNOWN_SHAPE, None),
        (b'{"text": "caf\xe9", "llm_label": "KNOWLEDGE"}', RejectCode.INVALID_ENCODING, None),
    ],
)
def test_malformed_lines_are_typed_rejections(
    raw: bytes, code: RejectCode, field: str | None
) -> None:
    result = parse_line(3, raw)
    assert isinstance(result, Rejection)
    assert result.reason == code
    assert result.line == 3
    assert "line 3" in result.message


@pytest.mark.parametrize(
    ("obj", "code", "field"),
    [
        (
            {k: v for k, v in row().items() if k != "artifact_id"},
            RejectCode.MISSING_FIELD,
            "artifact_id",
        ),
        (row(span_index="first"), RejectCode.INVALID_FIELD, "span_index"),
        (row(confidence=3.0), RejectCode.INVALID_FIELD, "confidence"),
        (row(source_type="ftp"), RejectCode.INVALID_FIELD, "source_type"),
        (row(text=""), RejectCode.EMPTY_TEXT, "text"),
        (row(text="  \n\t "), RejectCode.EMPTY_TEXT, "text"),
        (row(source_commit_sha=None), RejectCode.MISSING_PROVENANCE, None),
        (row(span_heading_path="{not json"), RejectCode.INVALID_FIELD, "span_heading_path"),
        (item(content={"text": "   "}), RejectCode.EMPTY_TEXT, "content.text"),
        (item(source={"type": "github", "repo": "x"}), RejectCode.MISSING_PROVENANCE, "source"),
        (item(locator={"kind": "url"}), RejectCode.MISSING_PROVENANCE, "locator"),
        (item(schema_version="1.0.0"), RejectCode.INVALID_FIELD, "schema_version"),
        (item(filtered_at="yesterday"), RejectCode.INVALID_FIELD, "filtered_at"),
    ],
)
def test_invalid_rows_name_the_field(
    obj: dict[str, Any], code: RejectCode, field: str | None
) -> None:
    result = parse(obj)
    assert isinstance(result, Rejection), result
    assert result.reason == code
    if field is not None:
        assert result.field == field
        assert field in result.message


def test_github_row_without_repo_names_what_is_missing() -> None:
    result = parse(row(source_repo=None))
    assert isinstance(result, Rejection) and result.reason == RejectCode.MISSING_PROVENANCE
    assert "source_repo" in result.message


def test_rss_row_without_guid_is_missing_provenance() -> None:
    result = parse(row(source_type="rss", feed_url="https://f", post_guid=None))
    assert isinstance(result, Rejection) and result.reason == RejectCode.MISSING_PROVENANCE
    assert "post_guid" in result.message


def test_labels_and_statuses_not_ours_are_skipped_not_errors() -> None:
    noise = parse(row(llm_label="NOISE"))
    assert isinstance(noise, Skip) and noise.reason == SkipCode.LABEL_NOT_OURS
    assert isinstance(parse(row(llm_label="UNCERTAIN")), Section)
    rejected = parse(item(status="rejected"))
    assert isinstance(rejected, Skip) and rejected.reason == SkipCode.STATUS_NOT_ACCEPTED


def test_duplicate_chunks_are_processed_once() -> None:
    registry = ChunkRegistry()
    first = registry.admit(parse(row()))
    again = registry.admit(parse(row()))
    changed = registry.admit(parse(row(text="Something else entirely.")))
    assert isinstance(first, Section)
    assert isinstance(again, Skip) and again.reason == SkipCode.DUPLICATE_CHUNK
    assert isinstance(changed, Rejection) and changed.reason == RejectCode.DUPLICATE_CHUNK_CONFLICT


def test_read_batch_tolerates_bom_crlf_blank_lines_and_streams(tmp_path: Path) -> None:
    lines = [json.dumps(row(chunk_id=f"c{i}")).encode() for i in range(5)]
    body = b"\xef\xbb\xbf" + lines[0] + b"\r\n\r\n" + b"\r\n".join(lines[1:]) + b"\n   \n"
    path = tmp_path / "q.jsonl"
    path.write_bytes(body)
    seen: list[int] = []
    blank = 0
    offset, next_line, eof = 0, 1, False
    while not eof:
        batch = read_batch(path, offset, next_line, max_lines=2)
        assert len(batch.lines) <= 2
        seen.extend(n for n, _ in batch.lines)
        blank += batch.blank_lines
        for n, raw in batch.lines:
            assert isinstance(parse_line(n, raw), Section)
        offset, next_line, eof = batch.next_offset, batch.next_line, batch.eof
    assert seen == [1, 3, 4, 5, 6]
    assert blank == 2


def test_read_batch_without_trailing_newline(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_bytes(json.dumps(row()).encode())
    batch = read_batch(path, 0, 1, 10)
    assert batch.eof and len(batch.lines) == 1
