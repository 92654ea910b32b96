"""Issue 30, items 1-3: the plain shapes behind one registry; Word and PDF documents of
the packaged sample policy read into the same sections as its CSV; the files a shape
must refuse, refused in one line."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from librarian.paths import packaged_data
from librarian.pipeline.plain import PlainInputError, plain_rows
from librarian.pipeline.shapes import PLAIN_SHAPES, plain_shape
from librarian.schemas.records import Rejection, Skip
from tests.documents import policy_docx, policy_pdf, policy_rows

POLICY = packaged_data("samples") / "sample_policy.csv"
NAME = "Acme Security Policy"
OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # an encrypted Word file is an OLE container


def sections(path: Path) -> list[tuple[str, str, list[str] | None, str | None]]:
    """(row id, text, section path, title) of every row, as the run validates them."""
    out = []
    for item in plain_rows(path, NAME).items.values():
        row = item["locator"]["id"].split("#", 1)[1].split(" (")[0]
        content = item["content"]
        out.append((row, content["text"], item.get("section_path"), content.get("title_hint")))
    return out


@pytest.fixture(scope="module")
def rows() -> list[dict[str, str]]:
    return policy_rows(POLICY)


@pytest.mark.parametrize("kind", ["docx", "pdf with an outline", "pdf, numbered headings"])
def test_a_word_or_pdf_policy_reads_as_its_csv(
    tmp_path: Path, rows: list[dict[str, str]], kind: str
) -> None:
    build = {
        "docx": lambda: policy_docx(rows, tmp_path / "policy.docx"),
        "pdf with an outline": lambda: policy_pdf(rows, tmp_path / "policy.pdf"),
        "pdf, numbered headings": lambda: policy_pdf(rows, tmp_path / "n.pdf", outline=False),
    }
    document = build[kind]()
    expected = sections(POLICY)
    assert len(expected) == 13
    assert sections(document) == expected
    # Locators carry the place: a paragraph of the Word file, a page's line of the PDF.
    first = next(iter(plain_rows(document, NAME).items.values()))["locator"]["id"]
    assert first.startswith(f"{NAME}#SEC-01 (") and ("paragraph 4" in first or "page 1" in first)


def test_running_headers_and_footers_are_no_text(
    tmp_path: Path, rows: list[dict[str, str]]
) -> None:
    text = " ".join(s[1] for s in sections(policy_pdf(rows, tmp_path / "p.pdf")))
    assert "internal" not in text and "Page " not in text


def test_a_word_table_with_id_and_text_columns_reads_like_a_csv(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_heading("Network", 1)
    document.add_paragraph("Rules for every network the company runs.")
    table = document.add_table(rows=3, cols=2)
    for r, (a, b) in enumerate(
        [("ID", "Text"), ("NET-1", "Firewalls deny by default."), ("NET-2", "Use VPN.")]
    ):
        table.rows[r].cells[0].text, table.rows[r].cells[1].text = a, b
    path = tmp_path / "net.docx"
    document.save(str(path))
    read = sections(path)
    assert read == [
        # A sentence the wording classifier reads as a requirement: numbered (issue 58).
        ("network-1", "Rules for every network the company runs.", ["Network"], "Network"),
        ("NET-1", "Firewalls deny by default.", ["Network"], "Network"),
        ("NET-2", "Use VPN.", ["Network"], "Network"),
    ]
    located = [item["locator"]["id"] for item in plain_rows(path, NAME).items.values()]
    assert located[1].endswith("(table 1, row 2)")


def _docm(tmp_path: Path, rows: list[dict[str, str]]) -> Path:
    path = policy_docx(rows, tmp_path / "macros.docx")
    with zipfile.ZipFile(path, "a") as package:
        package.writestr("word/vbaProject.bin", b"\x00macro")
    return path


def _encrypted_pdf(tmp_path: Path, rows: list[dict[str, str]]) -> Path:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(str(policy_pdf(rows, tmp_path / "plain.pdf"))))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    path = tmp_path / "locked.pdf"
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def _scanned_pdf(tmp_path: Path) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.rect(20, 20, 100, 60, style="F")  # an image of text, as far as a reader knows
    path = tmp_path / "scan.pdf"
    pdf.output(str(path))
    return path


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (
            lambda t, r: _write(
                t / "locked.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600
            ),
            "password-protected",
        ),
        (lambda t, r: _write(t / "broken.docx", b"PK\x03\x04 not really a zip"), "is damaged"),
        (_docm, "carries macros"),
        (_encrypted_pdf, "needs a password"),
        (
            lambda t, r: _write(t / "broken.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog"),
            "is damaged",
        ),
        (lambda t, r: _scanned_pdf(t), "no text layer"),
    ],
)
def test_files_a_shape_must_not_read_are_refused_in_one_line(
    tmp_path: Path, rows: list[dict[str, str]], make: object, says: str
) -> None:
    path = make(tmp_path, rows)  # type: ignore[operator]
    with pytest.raises(PlainInputError, match=says) as refused:
        plain_rows(path)
    assert "\n" not in str(refused.value)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_one_registry_names_every_shape(tmp_path: Path) -> None:
    names = {shape.name for shape in PLAIN_SHAPES}
    assert {"a Word document (.docx)", "a PDF (.pdf)", "a CSV table (.csv)"} <= names
    queue = tmp_path / "q.jsonl"
    queue.write_text('{"chunk_id": "c", "llm_label": "KNOWLEDGE", "text": "x"}\n')
    assert plain_shape(queue) is None  # the queue's JSONL is streamed, not a plain shape
    assert plain_shape(POLICY) is not None and plain_shape(tmp_path / "x.odt") is None


def test_the_queue_jsonl_is_a_registered_shape_and_a_files_shape_is_found_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40: the queue's JSONL is one more registered shape; a file's shape is found
    once, when its source is made, and carried to the reading (a .jsonl file's first row
    is read once to tell a table from the queue's)."""
    from librarian.errors import InputError
    from librarian.pipeline import shapes
    from librarian.pipeline.shapes import jsonl_table, queue_jsonl, shape_of
    from librarian.pipeline.sources import JsonlFile, PlainFile, file_source

    assert queue_jsonl.SHAPE in shapes.registered()
    assert queue_jsonl.SHAPE.name in shapes.in_words()
    queue = _write(tmp_path / "q.jsonl", b'{"chunk_id": "c", "llm_label": "KNOWLEDGE"}\n')
    table = _write(tmp_path / "t.jsonl", b'{"id": "R-1", "text": "Hash passwords."}\n')
    assert shape_of(queue) is queue_jsonl.SHAPE and shape_of(table) is jsonl_table.SHAPE
    sniffed: list[Path] = []
    first_row = jsonl_table.claims

    def counted(path: Path) -> bool:
        sniffed.append(path)
        return first_row(path)

    counting = replace(jsonl_table.SHAPE, claims=counted)
    plain = tuple(counting if s is jsonl_table.SHAPE else s for s in shapes.PLAIN_SHAPES)
    monkeypatch.setattr(shapes, "PLAIN_SHAPES", plain)
    assert isinstance(file_source(queue), JsonlFile)
    source = file_source(table, "Our table")
    assert isinstance(source, PlainFile) and source.shape is counting
    (batch,) = list(source.batches(10, set()))
    assert len(batch.lines) == 1
    assert sniffed == [queue, table]  # each file once: the source's shape is carried
    with pytest.raises(InputError, match="reads the knowledge queue's JSONL"):
        file_source(tmp_path / "notes.odt")


def test_what_a_file_is_by_its_first_bytes_is_declared_by_its_shape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 57: a shape declares its files' first bytes, so a new shape is one module and
    its registration: a file named for another shape is refused by what it is, and the
    shapes that share a format (Word and Excel: a zip) are named together."""
    from librarian.pipeline import shapes
    from librarian.pipeline.shapes.rows import Magic
    from librarian.pipeline.sources import mislabelled

    zipped = _write(tmp_path / "register.csv", b"PK\x03\x04rest")
    said = mislabelled(zipped) or ""
    assert "is a zip package" in said and "name it .xlsx or .docx" in said  # registry order
    assert mislabelled(_write(tmp_path / "register.xlsx", b"PK\x03\x04rest")) is None
    odd = Magic(b"ODDF", "an odd file")
    odd_shape = replace(
        PLAIN_SHAPES[0], name="an odd file (.odd)", suffixes=(".odd",), magic=(odd,)
    )
    monkeypatch.setattr(shapes, "PLAIN_SHAPES", (*shapes.PLAIN_SHAPES, odd_shape))
    odd_said = mislabelled(_write(tmp_path / "odd.jsonl", b"\xef\xbb\xbf ODDF1"))
    assert odd_said is not None and "is an odd file" in odd_said and "name it .odd" in odd_said
    assert mislabelled(_write(tmp_path / "fine.odd", b"ODDF1")) is None


def test_a_pdf_whose_outline_lists_chapters_alone(tmp_path: Path) -> None:
    """As real manuals are (two Debian package manuals were read this way): the outline
    lists the chapters, the sections are numbered headings in the text, a table of
    contents comes first, and prose may open with a name like "ASN.1"."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    for entry in ("1 Sessions . . . . . . . . . 2", "1.1 Tokens . . . . . . . . . . 2"):
        pdf.cell(0, 8, entry, new_x="LMARGIN", new_y="NEXT")
    pdf.add_page()
    pdf.start_section("1 Sessions", level=0)
    lines = [
        "1 Sessions",
        "Sessions are kept on the server.",
        "1.1 Tokens",
        "TOK-1 Tokens must be rotated after login.",
        "ASN.1 encodings are not used for tokens.",
        "1.2 Expiry",
        "Idle sessions end after thirty minutes.",
    ]
    for text in lines:
        pdf.cell(0, 8, text, new_x="LMARGIN", new_y="NEXT")
    path = tmp_path / "manual.pdf"
    pdf.output(str(path))
    # Issue 48, item 2: headings are context without their numbering (a Word file of the
    # same manual keeps "1 Sessions" as its heading's text; both read "Sessions").
    # Controls stated as fact are items numbered under their heading (issue 58: the wording
    # classifier), as a requirement's words make them.
    assert sections(path) == [
        ("sessions-1", "Sessions are kept on the server.", ["Sessions"], "Sessions"),
        ("TOK-1", "Tokens must be rotated after login.", ["Sessions", "Tokens"], "Tokens"),
        (  # "ASN.1" opens no label, and the line is a prohibition of its own
            "sessions/tokens-1",
            "ASN.1 encodings are not used for tokens.",
            ["Sessions", "Tokens"],
            "Tokens",
        ),
        (
            "sessions/expiry-1",
            "Idle sessions end after thirty minutes.",
            ["Sessions", "Expiry"],
            "Expiry",
        ),
    ]


# Issue 38, defects 7 and 8 -----------------------------------------------------------------


def _docx_with(tmp_path: Path, name: str, document_xml: bytes | None, padding: int = 0) -> Path:
    """A real .docx with its document.xml replaced (None: kept), and a stored part of
    `padding` NUL bytes first in the package."""
    import docx

    plain = tmp_path / f"plain-{name}"
    made = docx.Document()
    made.add_paragraph("SEC-01 Passwords are stored with a slow, salted hash.")
    made.save(str(plain))
    path = tmp_path / name
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(path, "w") as target:
        if padding:
            target.writestr(zipfile.ZipInfo("customXml/padding.bin"), b"\0" * padding)
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename == "word/document.xml" and document_xml is not None:
                data = document_xml
            target.writestr(info, data)
    return path


LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE w [<!ENTITY a "ha"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">'
    b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;">]>'
    b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
    b"<w:body><w:p><w:r><w:t>&d;&d;&d;&d;</w:t></w:r></w:p></w:body></w:document>"
)


@pytest.mark.parametrize(
    "document_xml",
    [b'<?xml version="1.0"?><w:document xmlns:w="urn:x"><w:body><w:p>', LAUGHS],
    ids=["cut short", "entity amplification"],
)
def test_a_docx_whose_xml_does_not_parse_is_refused_in_one_line(
    tmp_path: Path, document_xml: bytes
) -> None:
    """It gave a 200-line lxml traceback and exit 1."""
    path = _docx_with(tmp_path, "bad.docx", document_xml)
    with pytest.raises(PlainInputError, match="is damaged") as refused:
        plain_rows(path)
    assert "\n" not in str(refused.value)


def test_a_docx_with_nul_bytes_up_front_is_no_utf16_text(tmp_path: Path) -> None:
    """A valid .docx with NUL bytes in its first 4 KB was refused as "UTF-16 … iconv"."""
    from librarian.cli.run import check_input

    path = _docx_with(tmp_path, "padded.docx", None, padding=4096)
    assert path.read_bytes()[:4096].count(0) > 1024
    check_input(path, from_db=False)  # no UsageError
    assert [s[0] for s in sections(path)] == ["SEC-01"]
    text = tmp_path / "wide.csv"
    text.write_bytes("id,text\n".encode("utf-16"))
    from librarian.errors import UsageError

    with pytest.raises(UsageError, match="UTF-16"):
        check_input(text, from_db=False)  # a text file is still sniffed


# Issue 38, defects 10 and 11 -----------------------------------------------------------------


def _one_rule_a_page(path: Path, pages: int) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for n in range(1, pages + 1):
        pdf.add_page()
        pdf.cell(0, 8, f"SEC-{n:02d} Rule number {n} about tokens must hold.")
    pdf.output(str(path))
    return path


def test_a_pdf_of_one_requirement_a_page_reads_every_requirement(tmp_path: Path) -> None:
    """Lines that differ only in their numbers were taken for running headers: 0 rows."""
    read = sections(_one_rule_a_page(tmp_path / "rules.pdf", 6))
    assert [s[0] for s in read] == [f"SEC-{n:02d}" for n in range(1, 7)]


def test_a_pdf_page_that_cannot_be_read_is_rejected_with_its_number(tmp_path: Path) -> None:
    """4 of 6 sections read, exit 0, only a pypdf log line."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import EncodedStreamObject, NameObject

    source = PdfReader(str(_one_rule_a_page(tmp_path / "ok.pdf", 3)))
    writer = PdfWriter()
    for number, page in enumerate(source.pages, start=1):
        if number == 2:
            broken = EncodedStreamObject()
            broken[NameObject("/Filter")] = NameObject("/FlateDecode")
            broken._data = b"\x78\x9c not deflate at all"  # raw bytes, as a damaged file has
            page[NameObject("/Contents")] = writer._add_object(broken)
        writer.add_page(page)
    path = tmp_path / "corrupt.pdf"
    with path.open("wb") as handle:
        writer.write(handle)
    read = plain_rows(path, NAME)
    items = list(read.items.values())
    assert [i["locator"]["id"].split("#")[1].split(" ")[0] for i in items] == ["SEC-01", "SEC-03"]
    (why,) = [
        r.message.split(": ", 1)[1] for r in read.records.values() if isinstance(r, Rejection)
    ]
    assert why.startswith("page 2 cannot be read:")


# Issue 38, defect 9, and the empty Word file ------------------------------------------------


def test_word_text_in_content_controls_insertions_and_nested_tables_is_read(
    tmp_path: Path,
) -> None:
    """Text in a content control (`w:sdt`), a tracked insertion (`w:ins`) and a nested
    table was dropped silently, exit 0."""
    import docx
    from docx.oxml import parse_xml

    document = docx.Document()
    document.add_heading("Access", 1)
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    body = document.element.body
    body.append(
        parse_xml(
            f"<w:sdt {w}><w:sdtContent><w:p><w:r><w:t>ACC-1 Accounts are reviewed "
            "quarterly.</w:t></w:r></w:p></w:sdtContent></w:sdt>"
        )
    )
    body.append(
        parse_xml(
            f"<w:p {w}><w:r><w:t>ACC-2 Access is </w:t></w:r><w:ins w:id='1' w:author='a'>"
            "<w:r><w:t>revoked on the day a person leaves.</w:t></w:r></w:ins>"
            "<w:del w:id='2' w:author='a'><w:r><w:delText>kept forever.</w:delText></w:r></w:del>"
            "</w:p>"
        )
    )
    table = document.add_table(rows=2, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "ID", "Text"
    table.rows[1].cells[0].text = "ACC-3"
    inner = table.rows[1].cells[1].add_table(rows=1, cols=1)
    inner.rows[0].cells[0].text = "Shared accounts are forbidden."
    body.append(body[-1])  # keep the section properties last, as Word writes them
    path = tmp_path / "controls.docx"
    document.save(str(path))
    read = {row: text for row, text, _, _ in sections(path)}
    assert read["ACC-1"] == "Accounts are reviewed quarterly."
    assert read["ACC-2"] == "Access is revoked on the day a person leaves."
    assert "Shared accounts are forbidden." in read["ACC-3"]


def test_an_empty_word_document_is_refused_like_an_empty_pdf(tmp_path: Path) -> None:
    import docx

    path = tmp_path / "empty.docx"
    docx.Document().save(str(path))
    with pytest.raises(PlainInputError, match="has no text"):
        plain_rows(path)


def test_a_new_plain_shape_is_one_module_and_one_registry_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40: a shape registered, and nothing else changed, is read by a run's source,
    named in every list of shapes (the errors' too), and its rows validate as sections."""
    from collections.abc import Iterator

    from librarian.pipeline import shapes
    from librarian.pipeline.shapes.rows import PlainRow, PlainShape
    from librarian.pipeline.sources import PlainFile, file_source, known_shape
    from librarian.schemas.records import Section

    def read(path: Path) -> Iterator[PlainRow]:  # the "module": one rule a line, "ID: text"
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            rule, _, text = line.partition(": ")
            yield PlainRow(number, rule, text)

    plain_text = PlainShape("a rules file (.rules)", (".rules",), read)
    rules = tmp_path / "policy.rules"
    rules.write_text("R-1: Passwords are hashed with a memory-hard function.\nR-2: Log logins.\n")
    assert not known_shape(rules)
    monkeypatch.setattr(shapes, "PLAIN_SHAPES", (*shapes.PLAIN_SHAPES, plain_text))
    assert known_shape(rules) and "a rules file (.rules)" in shapes.in_words()
    source = file_source(rules, "Our Rules")
    assert isinstance(source, PlainFile)
    (batch,) = list(source.batches(10, set()))
    parsed = [batch.records[n] for n, _ in batch.lines]
    assert all(isinstance(p, Section) for p in parsed)
    assert [p.text for p in parsed if isinstance(p, Section)][1] == "Log logins."


def test_every_list_of_shapes_in_help_and_docs_names_the_registry() -> None:
    """The help is made from the registry; the docs' lists name every registered suffix."""
    from typer.testing import CliRunner

    from librarian.cli import app
    from librarian.pipeline.shapes import suffixes

    helped = CliRunner().invoke(app, ["run", "--help"], terminal_width=400).output
    shown = " ".join(helped.replace("\u2502", " ").split())  # out of rich's boxes
    assert all(shape.name in shown for shape in PLAIN_SHAPES)
    root = Path(__file__).resolve().parents[2]
    run_line = next(
        line for line in (root / "README.md").read_text().splitlines()
        if line.startswith("librarian run INPUT")
    )  # fmt: skip
    guide = (root / "docs" / "guide.md").read_text()
    for suffix in {s for s in suffixes() if s not in (".ndjson", ".markdown", ".docm")}:
        assert suffix in run_line and f"`{suffix}`" in guide, suffix


@pytest.mark.parametrize(
    ("intro", "kept"),
    [
        ("This policy applies to all employees and contractors of Acme.", False),
        ("All systems must be patched within 30 days of a release.", True),
    ],
)
def test_a_documents_preamble_is_no_item_unless_it_reads_as_a_requirement(
    tmp_path: Path, intro: str, kept: bool
) -> None:
    """Issue 41, item 5: the intro paragraph became a 41st item to reject by hand. It is
    skipped as NOT_A_REQUIREMENT, accounted for; a preamble that says "must" is linked."""
    from librarian.pipeline.accounting import check_accounting
    from librarian.pipeline.run import Collected, RunParts, run_source
    from librarian.pipeline.sources import PlainFile
    from librarian.schemas.records import RunSummary
    from tests.stubs import stub_pipeline

    policy = tmp_path / "policy.md"
    policy.write_text(
        f"{intro}\n\n# Authentication\n\nPasswords are hashed with a memory-hard function.\n\n"
        "# Sessions\n\nSession tokens are rotated at sign-in.\n"
    )
    pipeline = stub_pipeline(threshold=0.99)
    summary = RunSummary(run_id="p", input=str(policy), out_dir="", started_at="")
    collected = Collected()
    batches = PlainFile(policy, "Acme Policy").batches(100)
    run_source(pipeline, batches, pipeline.context("p"), summary, RunParts(sinks=[collected]))
    check_accounting(summary)  # every line in one outcome
    assert summary.read == 3
    assert summary.linked + summary.review == (3 if kept else 2)
    skips = summary.by_reason.get("skipped", {})
    assert skips == ({} if kept else {"NOT_A_REQUIREMENT": 1})
    if not kept:
        (skip,) = collected.result.skips
        assert skip.line == 1 and "preamble" in skip.message


@pytest.mark.parametrize(
    ("document", "skipped"),
    [
        # The introduction under the title, its chapters after it: no item.
        ("# Acme Policy\n\nThis policy applies to all staff.\n\n## Passwords\n\nHashed.\n", 1),
        # A title with no chapters under it: its text is the rule.
        ("# Passwords\n\nPasswords are hashed with a slow function.\n", 0),
        # A first chapter, not a title over the rest: its text is a rule.
        ("## Passwords\n\nPasswords are hashed.\n\n## Sessions\n\nTokens rotate.\n", 0),
    ],
)
def test_a_markdown_documents_introduction_under_its_title_is_no_item(
    tmp_path: Path, document: str, skipped: int
) -> None:
    """Issue 41, item 5: a Markdown policy's intro sits under its title, not before it."""
    policy = tmp_path / "policy.md"
    policy.write_text(document)
    rows = plain_rows(policy, "Acme Policy")
    notes = [line for line, r in rows.records.items() if isinstance(r, Skip)]
    assert len(notes) == skipped
    assert all(line == 1 for line in notes)  # only the introduction


def test_a_pdf_whose_page_object_is_damaged_names_that_page(tmp_path: Path) -> None:
    """Issue 47, item 10: pypdf dropped a damaged page object with only a log line
    ("Object 7 0 not defined"): 5 of 6 rules read, exit 0. Every page either yields its
    text or is named in a rejection; the pages after it keep their numbers."""
    import re

    from pypdf import PdfReader

    path = _one_rule_a_page(tmp_path / "ok.pdf", 6)
    data = path.read_bytes()
    reference = PdfReader(str(path)).pages[2].indirect_reference
    assert reference is not None
    third = reference.idnum
    header = b"\n%d 0 obj" % third
    at = re.search(re.escape(header), data)
    assert at is not None
    damaged = tmp_path / "damaged.pdf"
    damaged.write_bytes(data[: at.start()] + b"\n%d 0 obj" % (third + 1000) + data[at.end() :])
    read = plain_rows(damaged, NAME)
    items = list(read.items.values())
    ids = [i["locator"]["id"].split("#")[1].split(" ")[0] for i in items]
    assert ids == ["SEC-01", "SEC-02", "SEC-04", "SEC-05", "SEC-06"]
    (why,) = [
        r.message.split(": ", 1)[1] for r in read.records.values() if isinstance(r, Rejection)
    ]
    assert why.startswith("page 3 cannot be read: its page object") and "damaged" in why


def _rewritten(source: Path, out: Path, part: str, write: object) -> Path:
    """`source` with its `part` written by `write(handle, original_bytes)` (streamed)."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            data = old.read(info.filename)
            if info.filename != part:
                new.writestr(info, data)
                continue
            with new.open(part, "w") as handle:
                write(handle, data)  # type: ignore[operator]
    return out


def test_a_dtd_anywhere_in_a_word_part_is_refused(tmp_path: Path) -> None:
    """Issue 47, item 8: the guard read the first 4 KB only; a DOCTYPE after 4 KB of
    padding passed, and the text after an entity reference was dropped."""
    rows = [{"id": "SEC-01", "text": "The system must protect data.", "section_path": "A"}]
    plain = policy_docx(rows, tmp_path / "plain.docx")

    def padded(handle: object, data: bytes) -> None:
        declaration, rest = data.split(b"?>", 1)
        entity = b'<!DOCTYPE w:document [<!ENTITY x "secret">]>'
        handle.write(declaration + b"?>" + b" " * 5000 + entity + rest)  # type: ignore[attr-defined]

    hostile = _rewritten(plain, tmp_path / "dtd.docx", "word/document.xml", padded)
    with pytest.raises(PlainInputError, match=r"part word/document\.xml declares a DTD"):
        plain_rows(hostile)


def test_a_word_zip_bomb_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    """Issue 47, item 9: a 3 MB .docx inflating to 3 GiB of whitespace took 6.3 GB of
    memory and 17 s before it was refused. Now its parts are inflated a chunk at a time
    and counted: refused at the limit, memory bounded by the chunk."""
    import tracemalloc

    from librarian.pipeline.shapes import ooxml

    rows = [{"id": "SEC-01", "text": "The system must protect data.", "section_path": "A"}]
    plain = policy_docx(rows, tmp_path / "plain.docx")
    over = ooxml.MAX_PART_BYTES // (1024 * 1024) + 8

    def bomb(handle: object, data: bytes) -> None:
        handle.write(data[:-20])  # type: ignore[attr-defined]
        for _ in range(over):
            handle.write(b" " * (1024 * 1024))  # type: ignore[attr-defined]
        handle.write(data[-20:])  # type: ignore[attr-defined]

    bombed = _rewritten(plain, tmp_path / "bomb.docx", "word/document.xml", bomb)
    assert bombed.stat().st_size < 2 * 1024 * 1024  # small on disk, huge inflated
    tracemalloc.start()
    with pytest.raises(PlainInputError, match="inflates past what a Word document holds"):
        plain_rows(bombed)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 16 * 1024 * 1024, peak


HOUSE_IDS = [
    "POL-AC-01",
    "POL-AC02",
    "POL.AC.03",
    "POL_AC_04",
    "ISP-3.2",
    "A.5.1",
    "AC-2(1)",
    "REQ-001",
]


@pytest.mark.parametrize("kind", ["docx", "pdf"])
def test_requirement_ids_of_every_common_house_style_start_their_own_item(
    tmp_path: Path, kind: str
) -> None:
    """Issue 48, item 1: `POL-AC-01` was no requirement id (`AC-01` was), so a company's 40
    requirements became 10 items, one a chapter, silently."""
    rows = [  # two chapters, a page each: the PDF's running lines recur, and are cut
        {
            "id": rule,
            "text": f"Rule {n} says the system must log event {n}.",
            "section_path": "Logs" if n <= 4 else "Access",
        }
        for n, rule in enumerate(HOUSE_IDS, start=1)
    ]
    build = policy_docx if kind == "docx" else policy_pdf
    read = sections(build(rows, tmp_path / f"house.{kind}"))
    assert [r[0] for r in read] == HOUSE_IDS
    assert [r[1] for r in read] == [row["text"] for row in rows]


def test_numbered_and_generic_headings_read_alike_in_word_and_pdf(tmp_path: Path) -> None:
    """Issue 48, item 2: the Word heading kept its number ("5 Logging and monitoring"), the
    PDF's dropped it, so ids and first suggestions differed; a generic heading ("Part 3")
    was prepended to every requirement under it."""
    import docx

    document = docx.Document()
    document.add_heading("5 Logging and monitoring", 1)
    document.add_paragraph("Security events are kept for a year and reviewed weekly.")
    document.add_heading("Part 3", 1)
    document.add_paragraph("SEC-07 Passwords must be hashed with a slow, salted function.")
    path = tmp_path / "numbered.docx"
    document.save(str(path))
    read = sections(path)
    assert read[0][:3] == (
        "logging-and-monitoring-1",  # stated as fact: numbered (issue 58)
        "Security events are kept for a year and reviewed weekly.",
        ["Logging and monitoring"],
    )
    assert read[0][3] == "Logging and monitoring"
    assert read[1][0] == "SEC-07" and read[1][2] == ["Part 3"]
    assert read[1][3] is None  # "Part 3" titles nothing: the models read the rule alone


def test_the_docs_name_every_shape_the_registry_reads() -> None:
    """Issue 49, item 5: README, the guide and the reference listed the shapes by hand (the
    guide's table of refusals still quoted a message from before Word and PDF). Each now
    names every registered shape's file ending, and the guide quotes the refusal as
    `in_words` writes it."""
    from librarian.pipeline import shapes

    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text()
    run_line = next(x for x in readme.splitlines() if x.startswith("librarian run INPUT"))
    reference = (root / "docs" / "reference.md").read_text()
    guide = (root / "docs" / "guide.md").read_text()
    for shape in shapes.registered():
        assert shape.suffixes[0] in run_line, (shape.name, run_line)
        for suffix in shape.suffixes:
            assert f"`{suffix}`" in reference, (shape.name, suffix)
    assert f"`… the librarian reads {shapes.in_words()}`" in guide
