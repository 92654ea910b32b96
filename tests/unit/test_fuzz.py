"""Property-based tests of the input boundary (hypothesis): arbitrary bytes and arbitrary
JSON values per line, deep nesting, huge numbers, surrogates, NUL and unicode controls.

Invariants: no exception escapes `parse_line`; every outcome is a Section, a Rejection
with a reason or a Skip, and can be written out as UTF-8 JSON; every Section decides into
an envelope the published RFC schemas accept. Profiles (tests/conftest.py): `ci`, bounded,
runs in `make test`; `make fuzz` runs the long one. The flow half is
tests/integration/test_fuzz_flow.py.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from librarian.pipeline import one_shot
from librarian.pipeline.dedup import ChunkRegistry
from librarian.pipeline.ingest import parse_line
from librarian.schemas.envelopes import dump_envelope
from librarian.schemas.records import RejectCode, Rejection, Section, Skip
from tests.rfc import assert_rfc_valid
from tests.rows import HOSTILE, hostile_lines, row
from tests.stubs import stub_pipeline

# Text as hostile input carries it: any code point, surrogates and controls included.


def written_out(parsed: Section | Rejection | Skip) -> None:
    json.dumps(parsed.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")


@given(lines=st.lists(hostile_lines(), min_size=1, max_size=8))
def test_no_line_escapes_the_boundary_and_every_outcome_is_accounted(lines: list[bytes]) -> None:
    registry = ChunkRegistry()
    parsed = [registry.admit(parse_line(n, raw)) for n, raw in enumerate(lines, start=1)]
    for outcome in parsed:
        assert isinstance(outcome, Section | Rejection | Skip)
        if not isinstance(outcome, Section):
            assert outcome.message and str(outcome.reason)
        written_out(outcome)
    sections = [p for p in parsed if isinstance(p, Section)]
    result = one_shot.link(stub_pipeline(threshold=0.5), sections, "fuzz")
    assert len(result.envelopes) == len(sections)  # read = decided + rejected + skipped
    assert_rfc_valid([dump_envelope(e) for e in result.envelopes])


@given(text=HOSTILE.filter(lambda t: t.strip() != ""), title=HOSTILE)
def test_any_text_in_a_good_row_is_decided_or_refused_with_a_reason(text: str, title: Any) -> None:
    raw = json.dumps(row(text=text, span_heading_path=json.dumps([title]))).encode(
        "utf-8", "surrogatepass"
    )
    parsed = parse_line(1, raw)
    written_out(parsed)
    if isinstance(parsed, Section):
        result = one_shot.link(stub_pipeline(threshold=0.5), [parsed], "fuzz")
        assert_rfc_valid([dump_envelope(e) for e in result.envelopes])
    else:
        assert isinstance(parsed, Rejection) and parsed.message


# The queue table as another writer may leave it (issue 21, item 10): SQLite keeps any
# value in any column. A claim never fails; each row is readable or rejected with a reason.
WRONG_TYPES = st.one_of(
    st.binary(max_size=8),
    HOSTILE,
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.none(),
)
QUEUE_COLUMNS = (
    "text",
    "chunk_id",
    "source_committed_at",
    "created_at",
    "span_index",
    "span_total",
    "confidence",
    "span_heading_path",
    "locator_path",
)


@given(column=st.sampled_from(QUEUE_COLUMNS), value=WRONG_TYPES)
def test_a_queue_row_of_any_type_never_fails_the_claim(
    tmp_path_factory: Any, column: str, value: Any
) -> None:
    from sqlalchemy import text

    from librarian.store.db import make_engine, upgrade
    from librarian.store.queue import claim, enqueue

    engine = make_engine(f"sqlite:///{tmp_path_factory.mktemp('q') / 'q.db'}")
    upgrade(engine)
    rows = [row(chunk_id=c, text=f"Rotate keys: {c}.") for c in ("good-1", "odd", "good-2")]
    enqueue(engine, list(enumerate(rows, start=1)))
    with engine.begin() as conn:
        update = f"UPDATE knowledge_queue SET {column} = :v WHERE chunk_id = 'odd'"
        raw = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else b""
        if raw.decode("utf-8", "ignore") != (value if isinstance(value, str) else ""):
            # text that is not UTF-8: another writer's bytes in a TEXT column
            value = value.encode("utf-8", "surrogatepass")
            update = update.replace(":v", "CAST(:v AS TEXT)")
        conn.execute(text(update), {"v": value})
    claimed = claim(engine, 10)
    claimed.session.close()
    engine.dispose()
    assert len(claimed.lines) == 3
    registry = ChunkRegistry()
    for queue_id, data in claimed.lines:
        if queue_id in claimed.unreadable:
            assert column in claimed.unreadable[queue_id]
            continue
        outcome = registry.admit(parse_line(queue_id, data))
        assert isinstance(outcome, Section | Rejection | Skip)
        if queue_id != 2:
            assert isinstance(outcome, Section), outcome


# Plain inputs (issue 21, item 7 and 11): no row cut or merged without a word -------------

CELLS = st.text(alphabet=st.sampled_from('ab ,"\n;\t\u202e\u00e9'), max_size=12)


@given(rows=st.lists(st.lists(CELLS, min_size=1, max_size=4), max_size=6))
def test_every_csv_record_is_a_row_or_a_rejection_or_the_file_is_refused(
    tmp_path_factory: Any, rows: list[list[str]]
) -> None:
    import csv
    import io

    from librarian.pipeline.plain import PlainInputError, plain_rows

    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["id", "text"])
    for number, cells in enumerate(rows):
        writer.writerow([f"R{number}", *cells])  # some rows have more cells than the header
    path = tmp_path_factory.mktemp("csv") / "reqs.csv"
    path.write_text(buffer.getvalue(), encoding="utf-8")
    try:
        read = plain_rows(path)
    except PlainInputError:
        return
    records = [r for r in csv.reader(io.StringIO(buffer.getvalue())) if any(c.strip() for c in r)]
    assert len(read.lines) == len(records) - 1  # every data record, once
    for number, _ in read.lines:
        record = read.records[number]
        if isinstance(record, Rejection) and record.reason == RejectCode.MALFORMED_ROW:
            assert "cells, the header 2" in record.message
        else:
            assert isinstance(record, Section | Rejection)


PIECES = st.one_of(
    st.builds(
        lambda n, t: "#" * n + " " + t, st.integers(1, 6), st.text("Ab !?é", min_size=1, max_size=8)
    ),
    st.text(alphabet=st.sampled_from("abc d.é"), min_size=1, max_size=30)
    .map(str.strip)
    .filter(bool),
    st.sampled_from(["```\n# not a heading\n```", "~~~\ncode\n~~~", "Setext\n------", "---"]),
)


@given(pieces=st.lists(PIECES, max_size=12))
@example(pieces=["a. a"])  # CI's find: not a list in Markdown, its "a." kept
def test_markdown_keeps_every_paragraph_under_unique_ids(pieces: list[str]) -> None:
    from librarian.pipeline.shapes.markdown import markdown_blocks

    text = "\n\n".join(pieces)
    blocks = list(markdown_blocks(text))
    ids = [b.id for b in blocks]
    assert len(ids) == len(set(ids))
    everything = "\n".join(str(b.text) for b in blocks)
    for piece in pieces:
        if not piece.startswith(("#", "```", "~~~", "Setext", "---")):
            assert piece in everything, (piece, blocks)


# Issue 28: hostile source names, chunk ids and locators reach the audit and summary.md ------

MARKDOWN_HOSTILE = st.lists(
    st.one_of(
        st.text(
            alphabet=st.one_of(
                st.characters(exclude_categories=["Cs"]),
                st.sampled_from("<>&[]()`*_|!#\\;=:\n\r\t\u202e"),
            ),
            max_size=20,
        ),
        st.sampled_from(["<img src=x onerror=a()>", "[x](javascript:a)", "; reranker=", "`"]),
    ),
    max_size=6,
).map("".join)


@given(text=MARKDOWN_HOSTILE)
def test_no_text_becomes_html_a_link_or_a_cell_break_in_summary_md(text: str) -> None:
    from markdown_it import MarkdownIt

    from librarian.text import markdown_cell

    row = f"| a | b |\n|---|---|\n| {markdown_cell(text)} | x |\n"
    tokens = MarkdownIt("commonmark").enable("table").parse(row)
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in t.children or []}
    assert not kinds & {"html_inline", "html_block", "link_open", "image", "code_inline"}
    cells = [t for t in tokens if t.type == "td_open"]
    assert len(cells) == 2  # the row has its two cells, whatever the text


@given(name=MARKDOWN_HOSTILE)
def test_no_source_name_adds_a_part_to_the_audit(name: str) -> None:
    from librarian.pipeline.components import stage_ids
    from librarian.pipeline.source_level import SourceStatus

    plain = SourceStatus("plain:ok", 3, None, 0, 0.9, False).describe()
    hostile = SourceStatus(name, 3, None, 0, 0.9, False).describe()
    assert "; " not in hostile and stage_ids(f"x=1; source={hostile}").keys() == {"x", "source"}
    assert stage_ids(f"x=1; source={plain}").keys() == {"x", "source"}


# Issue 38: hostile Word and PDF documents. Every requirement placed is read, or its page
# is rejected by number, or the whole file is refused in one line: nothing is lost
# silently.

WORD_BLOCKS = st.sampled_from(["plain", "sdt", "ins", "nested", "empty", "heading"])
W_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def _word_block(document: Any, kind: str, n: int) -> str | None:
    """Add one block of `kind` carrying rule n; its words (None: it carries none)."""
    from docx.oxml import parse_xml

    rule = f"REQ-{n} Rule {n} must hold."
    body = document.element.body
    if kind == "plain":
        document.add_paragraph(rule)
    elif kind == "sdt":
        body.insert(
            len(body) - 1,
            parse_xml(
                f"<w:sdt {W_NS}><w:sdtContent><w:p><w:r><w:t>{rule}</w:t></w:r></w:p>"
                "</w:sdtContent></w:sdt>"
            ),
        )
    elif kind == "ins":
        body.insert(
            len(body) - 1,
            parse_xml(
                f"<w:p {W_NS}><w:ins w:id='{n}' w:author='x'><w:r><w:t>{rule}</w:t></w:r>"
                "</w:ins></w:p>"
            ),
        )
    elif kind == "nested":
        table = document.add_table(rows=1, cols=1)
        table.rows[0].cells[0].add_table(rows=1, cols=1).rows[0].cells[0].text = rule
    elif kind == "heading":
        document.add_heading(f"Chapter {n}", 1)
        return None
    else:
        document.add_paragraph("")
        return None
    return f"Rule {n} must hold."


@given(blocks=st.lists(WORD_BLOCKS, max_size=10), padding=st.sampled_from([0, 4096]))
def test_a_hostile_word_document_loses_no_requirement(
    tmp_path_factory: Any, blocks: list[str], padding: int
) -> None:
    import zipfile

    import docx

    from librarian.cli.run import check_input
    from librarian.pipeline.plain import PlainInputError, plain_rows

    document = docx.Document()
    placed = {r for n, kind in enumerate(blocks) if (r := _word_block(document, kind, n))}
    folder = tmp_path_factory.mktemp("docx")
    path = folder / "hostile.docx"
    document.save(str(folder / "plain.docx"))
    with zipfile.ZipFile(folder / "plain.docx") as source, zipfile.ZipFile(path, "w") as target:
        if padding:  # NUL bytes up front: a binary package is no UTF-16 text
            target.writestr(zipfile.ZipInfo("customXml/pad.bin"), b"\0" * padding)
        for info in source.infolist():
            target.writestr(info, source.read(info.filename))
    check_input(path, from_db=False)
    try:
        read = plain_rows(path)
    except PlainInputError as refused:
        assert "\n" not in str(refused) and not placed  # only a document with no text
        return
    text = " ".join(item["content"]["text"] for item in read.items.values())
    assert all(rule in text for rule in placed), (placed, text)


@given(
    pages=st.lists(st.sampled_from(["rule", "broken", "blank"]), min_size=1, max_size=6),
)
def test_a_hostile_pdf_reads_every_page_or_rejects_it_by_number(
    tmp_path_factory: Any, pages: list[str]
) -> None:
    from fpdf import FPDF
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import EncodedStreamObject, NameObject

    from librarian.pipeline.plain import PlainInputError, plain_rows

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for n, kind in enumerate(pages, start=1):
        pdf.add_page()
        if kind != "blank":  # one requirement a page: no running header
            pdf.cell(0, 8, f"REQ-{n} Rule {n} must hold.")
    folder = tmp_path_factory.mktemp("pdf")
    pdf.output(str(folder / "plain.pdf"))
    writer = PdfWriter()
    for n, page in enumerate(PdfReader(str(folder / "plain.pdf")).pages, start=1):
        if pages[n - 1] == "broken":
            broken = EncodedStreamObject()
            broken[NameObject("/Filter")] = NameObject("/FlateDecode")
            broken._data = b"\x78\x9c corrupt"
            page[NameObject("/Contents")] = writer._add_object(broken)
        writer.add_page(page)
    path = folder / "hostile.pdf"
    with path.open("wb") as handle:
        writer.write(handle)
    try:
        read = plain_rows(path)
    except PlainInputError as refused:
        assert "\n" not in str(refused) and set(pages) == {"blank"}
        return
    ids = {item["locator"]["id"].split("#")[1].split(" ")[0] for item in read.items.values()}
    malformed = [r for r in read.records.values() if isinstance(r, Rejection)]
    rejected = {r.message.split(": ", 1)[1].split(" cannot")[0] for r in malformed}
    for n, kind in enumerate(pages, start=1):
        if kind == "rule":
            assert f"REQ-{n}" in ids
        elif kind == "broken":
            assert f"page {n}" in rejected
