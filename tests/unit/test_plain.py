"""Plain inputs: a CSV or JSONL table of requirements, a Markdown document by heading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from librarian.pipeline import one_shot
from librarian.pipeline.ingest import parse_line
from librarian.pipeline.plain import PlainInputError, is_plain, plain_rows
from librarian.pipeline.shapes.markdown import markdown_blocks
from librarian.schemas.envelopes import dump_envelope
from librarian.schemas.records import RejectCode, Rejection, Section, Skip
from librarian.text import quoted
from tests.rfc import assert_rfc_valid
from tests.stubs import stub_pipeline

CSV = (
    "id,text,title,section_path\n"
    'R1,"Passwords must be stored with a salted, slow hash.",Password storage,Auth > Storage\n'
    'R2,"All traffic must use TLS 1.2 or higher.",,\n'
    "R3,,Empty,\n"
    ',"A row without an id.",,\n'
)
MARKDOWN = """# Our Standard

Preamble text.

## Authentication

Users must be locked out after five failed logins.

```
# not a heading, inside code
```

### Passwords

Passwords must be hashed.

## Sessions

Session tokens must be rotated after login.
"""


def parsed(path: Path, source: str | None = None) -> list[Section | Rejection | Skip]:
    """Every line's record, as the run takes them."""
    return list(plain_rows(path, source).records.values())


def test_a_csv_table_becomes_sections_with_stable_provenance(tmp_path: Path) -> None:
    path = tmp_path / "reqs.csv"
    path.write_text(CSV)
    first = parsed(path, "Our Standard 2.0")
    sections = [p for p in first if isinstance(p, Section)]
    assert [s.line for s in sections] == [2, 3]  # the file's lines: the header is line 1
    one = sections[0]
    assert one.locator.id == "Our Standard 2.0#R1" and one.title_hint == "Password storage"
    assert one.heading_path == ("Auth", "Storage")
    assert one.artifact_id == "plain:Our Standard 2.0"
    assert one.source.url is not None and one.source.url.startswith("urn:librarian:plain:")
    refused = {p.line: p.reason for p in first if isinstance(p, Rejection)}
    assert refused == {4: RejectCode.EMPTY_TEXT, 5: RejectCode.MISSING_FIELD}
    again = [p for p in parsed(path, "Our Standard 2.0") if isinstance(p, Section)]
    assert [s.chunk_id for s in again] == [s.chunk_id for s in sections]  # stable ids
    path.write_text(CSV.replace("TLS 1.2", "TLS 1.3"))
    edited = [p for p in parsed(path, "Our Standard 2.0") if isinstance(p, Section)]
    assert edited[1].span_key == sections[1].span_key  # same row, new text: an update
    assert edited[1].content_hash != sections[1].content_hash
    result = one_shot.link(stub_pipeline(threshold=0.5), sections, "plain")
    assert_rfc_valid([dump_envelope(e) for e in result.envelopes])


def test_a_table_without_id_or_text_columns_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "reqs.csv"
    path.write_text("name,description\nx,y\n")
    with pytest.raises(PlainInputError, match="columns id and text"):
        plain_rows(path)


def test_markdown_splits_by_heading_and_ignores_code(tmp_path: Path) -> None:
    blocks = list(markdown_blocks(MARKDOWN))
    assert [b.section_path for b in blocks] == [
        ("Our Standard",),
        ("Our Standard", "Authentication"),
        ("Our Standard", "Authentication", "Passwords"),
        ("Our Standard", "Sessions"),
    ]
    assert "# not a heading" in str(blocks[1].text)
    assert blocks[2].id == "our-standard/authentication/passwords-1"
    path = tmp_path / "standard.md"
    path.write_text(MARKDOWN)
    records = parsed(path)
    # The introduction under the title is a note; each heading's text below it an item.
    assert [type(r) for r in records] == [Skip, Section, Section, Section]


def test_a_long_section_is_split_into_requirement_sized_blocks() -> None:
    paragraph = "The system must log every access decision. " * 20  # ~860 characters
    blocks = list(markdown_blocks("# Logging\n\n" + "\n\n".join([paragraph] * 4)))
    assert len(blocks) == 4 and [b.id for b in blocks][-1] == "logging-4"


def test_simple_jsonl_is_recognised_and_bad_lines_keep_their_numbers(tmp_path: Path) -> None:
    path = tmp_path / "reqs.jsonl"
    rows = [
        {"id": "A-1", "text": "Encrypt backups at rest.", "url": "https://x.example/a1"},
        {"id": "A-2"},
    ]
    path.write_text(json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\nnot json\n")
    assert is_plain(path)
    result = parsed(path)
    assert [(p.line, type(p).__name__) for p in result] == [
        (1, "Section"),
        (3, "Rejection"),
        (4, "Rejection"),
    ]
    assert isinstance(result[0], Section) and result[0].locator.url == "https://x.example/a1"
    assert isinstance(result[2], Rejection) and result[2].reason == RejectCode.INVALID_JSON


def test_queue_jsonl_is_not_taken_for_a_plain_table(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": 1, "text": "x", "chunk_id": "c", "llm_label": "K"}) + "\n")
    assert not is_plain(path)


def test_a_plain_inputs_rows_are_validated_as_knowledge_items_not_sniffed() -> None:
    """Issue 49, item 5: a row of a plain shape is a KnowledgeItem, whatever keys it has,
    validated as the dict its shape built (`parse_item`): no JSON written and parsed back,
    its keys not sniffed again; refused for what a decoded line is refused for."""
    from librarian.pipeline.ingest import parse_item

    queue_like = {"llm_label": "KNOWLEDGE", "source_type": "doc", "text": "x"}
    sniffed = parse_line(1, json.dumps(queue_like).encode())
    plain = parse_item(1, queue_like)
    assert isinstance(sniffed, Rejection) and isinstance(plain, Rejection)
    assert "QueueRow" in sniffed.message and "KnowledgeItem" in plain.message
    hollow = parse_item(2, {"content": {"text": "a\udc80b"}})
    assert isinstance(hollow, Rejection) and hollow.reason == RejectCode.INVALID_ENCODING
    assert "unpaired surrogate" in hollow.message


def test_a_plain_row_is_read_as_the_same_section_its_json_line_was(tmp_path: Path) -> None:
    """The records a plain input is read into are the Sections its rows' KnowledgeItems
    give when written as JSON lines and parsed (what the run did before item 5), and a
    refused row keeps that JSON as its raw input."""
    path = tmp_path / "reqs.csv"
    path.write_text(CSV)
    rows = plain_rows(path, "Standard")
    assert rows.records and set(rows.records) == set(rows.items)
    for line, item in rows.items.items():
        record, parsed = rows.records[line], parse_line(line, json.dumps(item).encode())
        if isinstance(parsed, Rejection):  # said with the row's words, to be found by them
            assert isinstance(record, Rejection)
            text = item.get("content", {}).get("text")
            assert record.message == f"{parsed.message}: {quoted(text)}"
            record = record.model_copy(update={"message": parsed.message})
        assert record == parsed
    raw = dict(rows.lines)
    refused = [n for n, r in rows.records.items() if isinstance(r, Rejection)]
    assert refused and all(json.loads(raw[n]) == rows.items[n] for n in refused)
    assert all(raw[n] == b"" for n in rows.records if n not in refused)


def test_a_markdown_rows_locator_is_its_heading_path_alone(tmp_path: Path) -> None:
    """The segmenter knows each block's line; a Markdown row's locator stays as it was
    (`DOC#our-standard/sessions-1`), so a document read again keeps its rows' places."""
    path = tmp_path / "standard.md"
    path.write_text("# Our Standard\n\n## Sessions\n\nSession tokens must be rotated.\n")
    (item,) = plain_rows(path, "Our Standard 2.0").items.values()
    assert item["locator"]["id"] == "Our Standard 2.0#our-standard/sessions-1"
