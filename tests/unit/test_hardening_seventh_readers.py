"""Issue 56: the PDF, Markdown, CSV and JSONL-table readers against hostile files.

Each reader's fuzz-and-time test reads generated hostile inputs under the stated limits
within a CPU-time budget (`time.process_time`, enforced by a profiling timer so that a
reader that runs away fails in seconds, not hours) and a memory budget (tracemalloc's
peak), and refuses inputs over the limits with a reason. The budgets are generous (the
readers take a tenth of them or less); before issue 56 each of these tests ran past its
budget or read an input over a limit without a word."""

from __future__ import annotations

import json
import re
import signal
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from librarian.cli import app
from librarian.pipeline.plain import PlainInputError
from librarian.pipeline.shapes import csv_table, jsonl_table, markdown, pdf, plain_shape, rows
from librarian.pipeline.shapes.pdf_tables import MAX_CELLS, MAX_RULES, MAX_TABLES
from librarian.pipeline.shapes.rows import MAX_ITEMS, PlainRow, Split, Unreadable

CPU_SECONDS = 5.0  # a reader's budget for one hostile input under the limits
MEMORY = 64 * 2**20  # and its tracemalloc peak

runner = CliRunner()


class OverBudget(Exception):
    pass


@contextmanager
def cpu_budget(seconds: float = CPU_SECONDS) -> Iterator[None]:
    """Fails the block once it has used `seconds` of CPU (ITIMER_PROF counts the
    process's CPU time, as `time.process_time` does): a busy machine slows it, never
    fails it."""

    def stop(_signum: int, _frame: FrameType | None) -> None:
        raise OverBudget(f"over {seconds} s of CPU")

    before = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    started = time.process_time()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, before)
    assert time.process_time() - started < seconds


def read_all(path: Path) -> list[PlainRow | Unreadable | Split]:
    """Every row the file's shape yields, as a run takes them (the items cap and all)."""
    shape = plain_shape(path)
    assert shape is not None
    return list(shape.read(path))


def within_budgets(path: Path, memory: bool = True) -> list[PlainRow | Unreadable | Split]:
    """Read `path` within the CPU budget, then again under tracemalloc within the memory
    budget (apart: tracemalloc slows allocation several times over)."""
    with cpu_budget():
        read = read_all(path)
    if memory:
        tracemalloc.start()
        try:
            read_all(path)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < MEMORY, f"{path.name}: {peak / 2**20:.0f} MiB"
    return read


def split_of(read: list[PlainRow | Unreadable | Split]) -> Split:
    return next(r for r in read if isinstance(r, Split))


def items(read: list[PlainRow | Unreadable | Split]) -> list[PlainRow]:
    return [r for r in read if isinstance(r, PlainRow) and r.note is None]


def refused_over_the_limit(path: Path) -> str:
    with cpu_budget(4 * CPU_SECONDS), pytest.raises(PlainInputError) as refused:
        read_all(path)
    said = str(refused.value)
    assert f"more than {MAX_ITEMS:,} items" in said and "split it" in said
    return said


# A PDF written by hand: a page of text lines (Helvetica, or its bold) and whatever else
# its content stream draws, compressed as a real one is (a few KB hold 10,000 rules).


def pdf_bytes(content: bytes) -> bytes:
    stream = zlib.compress(content, 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> >>",
        b"<< /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % at for at in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def text_ops(lines: list[tuple[str, float, bool]], top: float = 750, pitch: float = 14) -> bytes:
    """(text, size, bold) lines, one under the other from `top`."""
    ops = [b"BT"]
    for n, (text, size, bold) in enumerate(lines):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        font = b"/F2" if bold else b"/F1"
        ops.append(
            b"%s %.1f Tf 1 0 0 1 72 %.1f Tm (%s) Tj"
            % (font, size, top - n * pitch, escaped.encode("latin-1"))
        )
    ops.append(b"ET")
    return b"\n".join(ops)


def write_pdf(path: Path, lines: list[tuple[str, float, bool]], drawn: bytes = b"") -> Path:
    path.write_bytes(pdf_bytes(text_ops(lines) + b"\n" + drawn))
    return path


def body(*texts: str) -> list[tuple[str, float, bool]]:
    return [(t, 10.0, False) for t in texts]


RULE = "Users must lock their screens."


def _hostile_pdfs(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """PDFs under every limit that cost minutes before issue 56 (or seconds each)."""
    yield (
        "a contents line of 40,000 dots",
        write_pdf(tmp_path / "dots.pdf", body("Contents", "1 Introduction " + "." * 40_000, RULE)),
    )
    rules = min(4_000, MAX_RULES - 1)
    widths = b"\n".join(b"%d 700 30 0.5 re f" % (i * 100) for i in range(rules))
    yield (
        f"{rules:,} rules of as many widths",
        write_pdf(tmp_path / "widths.pdf", body(RULE), widths),
    )
    stacked = b"\n".join(b"72 %d m 500 %d l S" % (i * 301, i * 301) for i in range(rules))
    yield (
        f"{rules:,} rules of one width, a row's height apart",
        write_pdf(tmp_path / "stacked.pdf", body(RULE), stacked),
    )
    yield (
        f"{MAX_TABLES} tables side by side",
        write_pdf(tmp_path / "tables.pdf", body(RULE), side_by_side(MAX_TABLES)),
    )
    grid = 60  # a real table's worth of rules: 59 x 59 cells, each with its text
    lines = b"\n".join(
        b"72 %d m 544 %d l S 72 %d m 72 %d l S" % (100 + 8 * i, 100 + 8 * i, 100, 572)
        for i in range(grid)
    )
    downs = b"\n".join(b"%d 100 m %d 572 l S" % (72 + 8 * i, 72 + 8 * i) for i in range(grid))
    cells = (
        b"BT /F1 4 Tf "
        + b" ".join(
            b"1 0 0 1 %d %d Tm (c) Tj" % (74 + 8 * j, 102 + 8 * i)
            for i in range(grid - 1)
            for j in range(grid - 1)
        )
        + b" ET"
    )
    yield (
        "a ruled table of 3,481 cells",
        write_pdf(tmp_path / "grid.pdf", body(RULE), lines + b"\n" + downs + b"\n" + cells),
    )
    sizes = [(f"Heading {n}", 11 + n / 10, True) for n in range(3_000)]
    yield (
        "3,000 bold lines in as many sizes",
        write_pdf(tmp_path / "sizes.pdf", [*sizes, (RULE, 10.0, False)]),
    )
    deep = [(".".join(["1"] * n) + f" Part {n}", 10.0, True) for n in range(1, 400)]
    yield (
        "numbered headings 400 levels deep",
        write_pdf(tmp_path / "deep.pdf", [*deep, (RULE, 10.0, False)]),
    )


def side_by_side(tables: int) -> bytes:
    """`tables` one-row tables in a row across the page and past it: two rules across
    and one down each."""
    return b"\n".join(
        b"%d 600 m %d 600 l S %d 580 m %d 580 l S %d 570 m %d 610 l S"
        % (x, x + 50, x, x + 50, x + 25, x + 25)
        for x in (72 + 60 * i for i in range(tables))
    )


def test_pdf_readers_hostile_files_stay_in_budget_and_over_the_limits_say_so(
    tmp_path: Path,
) -> None:
    """Issue 56, item 1: a 759-byte PDF with a 40,000-dot contents line took 22 s (the
    contents pattern backtracked), 1.5 KB of 10,000 rule widths 17 s, 20,000 rules each
    way 30 s (every rule compared with every other). Under the limits each now reads in
    the budget; a page past one is read as lines, with a warning naming the page."""
    traced = {"dots.pdf", "widths.pdf", "tables.pdf", "grid.pdf"}  # the rest: time alone
    for what, path in _hostile_pdfs(tmp_path):
        read = within_budgets(path, memory=path.name in traced)
        assert any(RULE in (r.text or "") for r in items(read)), what
    grid = split_of(read_all(tmp_path / "grid.pdf")).warnings
    assert any(w.startswith("warning: table 1 (page 1") for w in grid), "read as a table"

    over = {
        "rules": b"\n".join(b"72 %d m 500 %d l S" % (i, i) for i in range(MAX_RULES + 1)),
        "tables": side_by_side(MAX_TABLES + 1),
        "cells": b"\n".join(
            b"72 %d m 400 %d l S %d 10 m %d 700 l S"
            % (10 + 4 * i, 10 + 4 * i, 72 + 2 * i, 72 + 2 * i)
            for i in range(int(MAX_CELLS**0.5) + 2)
        ),
    }
    inside = b"\nBT /F1 9 Tf 1 0 0 1 80 300 Tm (%s) Tj ET" % RULE.encode()
    for name, drawn in over.items():
        read = within_budgets(write_pdf(tmp_path / f"over-{name}.pdf", [], drawn + inside))
        warned = [w for w in split_of(read).warnings if "page 1 is not read as tables" in w]
        assert len(warned) == 1 and name in warned[0], (name, split_of(read).warnings)
        assert [r.text for r in items(read)] == [RULE], name


def test_a_contents_line_is_found_as_the_pattern_found_it() -> None:
    """The contents line scan reads what `(?:\\.\\s*){4,}\\d+\\s*$` found, in one pass."""
    pattern = re.compile(r"(?:\.\s*){4,}\d+\s*$")
    samples = [
        "2.1 Naming . . . . . 3",
        "Intro.....12",
        "Intro....12  ",
        "Intro...12",
        "Intro . . . 12",
        "Intro. . . . x 12",
        "Intro....12a",
        "....",
        "1.2.3.4.5",
        "a . . . .\t. 7 ",
        "",
        "Users must log in. 4",
        "." * 5000 + "x",
        "v1.2....3",
    ]
    for sample in samples:
        assert pdf.table_of_contents(sample) == bool(pattern.search(sample)), sample

    @given(st.text(alphabet=". \t1a", max_size=24))
    def alike(line: str) -> None:
        assert pdf.table_of_contents(line) == bool(pattern.search(line)), line

    alike()


CHECKLIST = [
    "Encrypt all backups at rest",
    "Rotate every service key once a year",
    "Review all administrator accounts each quarter",
    "Use multi-factor authentication for remote access",
    "Do not share accounts between staff",
    "Keep audit logs for at least a year",
]


def test_a_pdf_checklist_of_numbered_orders_reads_an_item_a_line_as_word_does(
    tmp_path: Path,
) -> None:
    """Issue 56, item 2: "1.1 Encrypt all backups at rest", six such lines in a PDF, were
    read as six numbered headings: 0 items, where Word reads 6. A numbered line in the
    text's own type that gives an order is an item (its number its id, as in Word); a
    real numbered heading in the text's type stays a heading."""
    import docx

    numbered = [f"1.{n} {text}" for n, text in enumerate(CHECKLIST, start=1)]
    path = write_pdf(tmp_path / "checklist.pdf", body("Backup checklist", *numbered))
    read = items(read_all(path))
    assert [(r.id, r.text) for r in read] == [
        (f"1.{n}", text) for n, text in enumerate(CHECKLIST, start=1)
    ]
    document = docx.Document()
    for line in numbered:
        document.add_paragraph(line)
    document.save(str(tmp_path / "checklist.docx"))
    assert [r.id for r in items(read_all(tmp_path / "checklist.docx"))] == [r.id for r in read]

    headed = write_pdf(
        tmp_path / "headed.pdf",
        body(
            "4.2 Session management",
            "Sessions end after fifteen minutes idle.",
            "4.3 Use of cryptography",
            "Keys are kept in the vault.",
        ),
    )
    assert [r.section_path for r in items(read_all(headed))] == [
        ("Session management",),
        ("Use of cryptography",),
    ]


def test_a_bold_numbered_order_with_no_text_under_it_is_named_in_a_warning(
    tmp_path: Path,
) -> None:
    """Set bold, the same line is a heading (as a benchmark's numbered recommendations
    are); with no text under it, no item is read for it, and the reader says so."""
    lines = [("Policy", 10.0, False), ("1.1 Encrypt all backups at rest", 10.0, True)]
    lines += [("1.2 Logging", 10.0, True), (RULE, 10.0, False)]
    split = split_of(read_all(write_pdf(tmp_path / "bold.pdf", lines)))
    said = [w for w in split.warnings if "Encrypt all backups at rest" in w]
    assert len(said) == 1 and "no item was read for it" in said[0]
    assert not any("Logging" in w for w in split.warnings)


@pytest.mark.parametrize("before", [b"     ", b"\xef\xbb\xbf", b"\r\n\t \xef\xbb\xbf"])
def test_a_pdf_after_whitespace_or_a_bom_is_known_by_its_bytes(
    tmp_path: Path, before: bytes
) -> None:
    """Issue 56, item 3: five bytes of whitespace (or a BOM) before `%PDF-` hid it: named
    .jsonl, it was read as 48 rejected queue lines, exit 0. It is refused as a PDF that
    is misnamed, as one without them is; named .pdf, it reads."""
    data = before + pdf_bytes(text_ops(body(f"R-1 {RULE}")))
    misnamed = tmp_path / "report.jsonl"
    misnamed.write_bytes(data)
    said = runner.invoke(app, ["run", str(misnamed), "--out", str(tmp_path / "out")])
    assert said.exit_code == 2, said.output
    assert "is a PDF document" in " ".join(said.output.split()) and "name it" in said.output
    assert not (tmp_path / "out").exists()
    named = tmp_path / "report.pdf"
    named.write_bytes(data)
    assert [(r.id, r.text) for r in items(read_all(named))] == [("R-1", RULE)]


def test_markdown_hostile_files_stay_in_budget_and_over_the_limit_are_refused(
    tmp_path: Path,
) -> None:
    """Issue 56, item 1: a 2 MB Markdown list took 1.2 GB. markdown-it holds every token
    of what it parses, so a long list is parsed a piece at a time; many lists, many
    headings each cost a step, not a pass over all before them; past MAX_ITEMS the file
    is refused."""
    short = tmp_path / "short.md"
    short.write_text("# Rules\n\n" + "".join(f"- Must {n}\n" for n in range(5_000)))
    assert len(items(within_budgets(short))) == 5_000
    hostile = {  # each a step a block: no pass over every block or token before it
        "lists.md": "".join(f"Para {n}.\n\n- Must {n}\n\n" for n in range(MAX_ITEMS // 2 - 1)),
        "headings.md": "".join(f"## Part {n}\n\nMust {n}.\n\n" for n in range(MAX_ITEMS // 2 - 1)),
        "nested.md": "".join("- " * 20 + f"Must {n}\n" for n in range(2_000)),
        "table.md": "| id | text |\n|---|---|\n"
        + "".join(f"| R-{n} | Users must {n}. |\n" for n in range(5_000)),
        "brackets.md": "[" * 50_000 + "\n\n" + "*a " * 30_000 + "\n\n" + "> " * 5_000 + "x\n",
    }
    for name, text in hostile.items():
        path = tmp_path / name
        path.write_text(text)
        within_budgets(path, memory=False)
    over = tmp_path / "over.md"
    over.write_text("".join(f"- Must {n}\n" for n in range(MAX_ITEMS + 1)))
    refused_over_the_limit(over)


def test_markdown_is_read_at_line_feeds_as_markdown_it_counts_lines(tmp_path: Path) -> None:
    """A U+2028 or a form feed in a paragraph shifted every later block's lines by one:
    the list item after it was read from the wrong line, and the last one lost."""
    text = "# Rules\n\nThe policy\u2028covers\x0cstaff.\n\n- Users must lock screens.\n"
    text += "- Admins must use MFA.\n"
    read = [r.text for r in markdown.markdown_blocks(text) if r.note is None]
    assert read == ["Users must lock screens.", "Admins must use MFA."]


def test_a_long_markdown_list_is_parsed_in_pieces_that_read_as_the_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pieces a long document is parsed in read as the document parsed whole: cut only
    before a top-level bullet, and never once a fence, HTML or a table was seen."""
    parts = []
    for n in range(3 * markdown.PIECE_LINES):
        parts.append(f"- Users must do {n}\n  and more {n}\n" if n % 3 else f"Para {n}.\n")
    text = "# Rules\n\n" + "".join(parts)
    in_pieces = [(r.id, r.text) for r in markdown.markdown_blocks(text)]
    assert len(list(markdown._pieces(text.split("\n")))) > 2
    fenced = "```\n" + "- not an item\n" * (3 * markdown.PIECE_LINES) + "```\n"
    assert len(list(markdown._pieces(fenced.split("\n")))) == 1
    monkeypatch.setattr(markdown, "PIECE_LINES", 10**9)
    assert len(list(markdown._pieces(text.split("\n")))) == 1
    assert [(r.id, r.text) for r in markdown.markdown_blocks(text)] == in_pieces


def _csv(path: Path, rows_: int, text: Callable[[int], str] = lambda n: f"Users must {n}.") -> Path:
    path.write_text("id,text\n" + "".join(f'R-{n},"{text(n)}"\n' for n in range(rows_)))
    return path


def test_csv_hostile_files_stay_in_budget_and_over_the_limit_are_refused(
    tmp_path: Path,
) -> None:
    """Issue 56, item 1: a 24,000-row CSV's dry run took 876 MB (the reader kept the text,
    a copy of its lines and its rows; the run keeps ~5 KB a row). Past MAX_ITEMS rows it
    is refused; under it, it reads in the budget, a wide row, a long cell and a file of
    malformed rows alike."""
    read = within_budgets(_csv(tmp_path / "many.csv", MAX_ITEMS))
    assert len(items(read)) == MAX_ITEMS
    wide = tmp_path / "wide.csv"
    wide.write_text("id,text\n" + "R-1,Users must x." + ",y" * 100_000 + "\n")
    assert isinstance(within_budgets(wide)[0], Unreadable)
    within_budgets(_csv(tmp_path / "long.csv", 3, lambda n: "word " * 400_000))
    bad = tmp_path / "bad.csv"
    bad.write_text("id,text\n" + "R,a,b\n" * (MAX_ITEMS - 1))
    assert all(isinstance(r, Unreadable) for r in within_budgets(bad))
    refused_over_the_limit(_csv(tmp_path / "over.csv", MAX_ITEMS + 1))


def test_a_refused_csv_row_keeps_its_own_lines(tmp_path: Path) -> None:
    """A refused row's raw text is the lines the csv reader read for it: the copy of the
    file's lines split at U+2028 and form feeds too, so a row after one showed another
    row's text."""
    path = tmp_path / "policy.csv"
    path.write_text('id,text\nR-1,"Users\u2028must\x0clog in."\nR-2,Admins must,use MFA.\n')
    unread = [r for r in csv_table.read(path) if isinstance(r, Unreadable)]
    assert [(r.line, r.raw) for r in unread] == [(3, "R-2,Admins must,use MFA.")]


def test_jsonl_table_hostile_files_stay_in_budget_and_over_the_limit_are_refused(
    tmp_path: Path,
) -> None:
    """Issue 56, item 1, for the JSONL table: read a line at a time; past MAX_ITEMS
    refused; a deep or a long line, and a file of bad lines, in the budget."""
    many = tmp_path / "many.jsonl"
    line = '{"id": "R-%d", "text": "Users must %d."}\n'
    many.write_text("".join(line % (n, n) for n in range(MAX_ITEMS)))
    assert len(items(within_budgets(many))) == MAX_ITEMS
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text(
        line % (0, 0)
        + "[" * 200_000
        + "\n"
        + '{"id": "R-1", "text": "'
        + "a" * 2_000_000
        + '"}\n'
        + "not json\n" * 5_000
    )
    read = within_budgets(hostile)
    assert sum(isinstance(r, Unreadable) for r in read) == 5_001
    over = tmp_path / "over.jsonl"
    over.write_text("".join(line % (n, n) for n in range(MAX_ITEMS + 1)))
    refused_over_the_limit(over)


def test_a_jsonl_table_row_holding_a_line_separator_is_one_row(tmp_path: Path) -> None:
    """JSON may hold a raw U+2028 in a string; `splitlines` cut such a row in two
    rejected halves (the queue's JSONL, split at line feeds, read it whole)."""
    path = tmp_path / "table.jsonl"
    rows_ = [{"id": "R-1", "text": "Users must\u2028log in."}, {"id": "R-2", "text": "Use MFA."}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows_))
    read = list(jsonl_table.read(path))
    assert [(r.line, r.id, r.text) for r in read if isinstance(r, PlainRow)] == [
        (1, "R-1", "Users must\u2028log in."),
        (2, "R-2", "Use MFA."),
    ]
    assert not [r for r in read if isinstance(r, Unreadable)]


def test_one_items_limit_holds_for_every_plain_shape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limit is one constant (`rows.MAX_ITEMS`), applied by the registry's shapes
    themselves: a Word document is refused past it as a CSV is."""
    import docx

    monkeypatch.setattr(rows, "MAX_ITEMS", 3)
    document = docx.Document()
    for n in range(4):
        document.add_paragraph(f"R-{n} Users must do {n}.")
    document.save(str(tmp_path / "four.docx"))
    for path in (tmp_path / "four.docx", _csv(tmp_path / "four.csv", 4)):
        with pytest.raises(PlainInputError, match="more than 3 items"):
            read_all(path)
    assert len(items(read_all(_csv(tmp_path / "three.csv", 3)))) == 3
