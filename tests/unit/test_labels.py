"""Issue 58, items 1-3: a document's own numbering learnt from the document, page
furniture left out and said, and every drop findable by its words and its place."""

from __future__ import annotations

from pathlib import Path

from librarian.pipeline.dedup import ChunkRegistry
from librarian.pipeline.ingest import parse_item
from librarian.pipeline.plain import plain_rows
from librarian.pipeline.shapes.clauses import (
    Clauses,
    cited_by,
    ends_a_lead_in,
    is_title,
    parent_of,
    titles,
)
from librarian.pipeline.shapes.labels import Numbering, candidate
from librarian.pipeline.shapes.notes import is_note
from librarian.pipeline.shapes.rows import PlainRow
from librarian.pipeline.shapes.segment import Block, Segmenter
from librarian.schemas.records import Rejection, Section, Skip
from tests.blind_policies import POLICIES
from tests.rows import item


def read(blocks: list[Block]) -> list[PlainRow]:
    segmenter = Segmenter()
    rows = [row for block in blocks for row in segmenter.feed(block)]
    return rows + list(segmenter.end())


def items(rows: list[PlainRow]) -> list[tuple[str | None, str | None]]:
    return [(r.id, r.text) for r in rows if r.note is None]


def paragraphs(*texts: str) -> list[Block]:
    return [Block("paragraph", t, f"paragraph {n}") for n, t in enumerate(texts, start=1)]


def test_a_numbering_is_learnt_when_its_labels_count_up() -> None:
    outline = ["IV.a\tAccess is logged.", "IV.b Users will x.", "IV.c Y", "V.a Z", "V.b W"]
    assert Numbering.learnt(outline).schemes == frozenset({"R.a"})
    sub = ["3.1 A.", "3.2 The agency shall:", "(a) x;", "(b) y;", "(c) z.", "3.3 B."]
    assert "n.n" in Numbering.learnt(sub).schemes
    assert Numbering.learnt(["R-01 A", "R-02 B", "R-04 C", "R-05 D"]).schemes == {"A-n2"}


def test_tokens_that_open_a_line_but_count_nothing_are_no_numbering() -> None:
    """A cipher's name, an abbreviation, a footer's id on every page, a sentence's first
    letter: each opens a paragraph, none counts up."""
    footer = ["ISP-01 Information Security Policy, version 1.0 Page 1"] * 4
    texts = ["SHA-1 and DES are prohibited.", "e.g. a laptop", *footer, "A user must log in."]
    assert Numbering.learnt(texts).schemes == frozenset()
    assert candidate("A user must log in.") is None  # a lone letter is set off by . ) or tab
    assert candidate("X.c within 24 hours.") is None  # a wrapped line citing a clause


def test_every_labelled_clause_is_its_own_item_whatever_its_wording() -> None:
    """The ninth house style: clauses in will, is and are, never glued to the one before
    or dropped as context, each under its own label."""
    rows = read(
        [
            Block("heading", "Backup", "paragraph 1", level=1),
            *paragraphs(
                "Purpose: this section says how data is kept.",
                "VI.a\tBusiness-critical data is backed up every day.",
                "VI.b\tBackups will be kept for 30 days.",
                "VI.c\tRestores are tested every quarter.",
                "Note: the schedule is kept by operations.",
                "VI.d\tBackup media shall be encrypted.",
            ),
        ]
    )
    assert [i for i, _ in items(rows)] == ["VI.a", "VI.b", "VI.c", "VI.d"]
    assert items(rows)[0][1] == "Business-critical data is backed up every day."
    assert sum(1 for r in rows if r.note) == 2


def test_sub_clauses_are_cited_under_their_clause_and_read_with_its_lead_in() -> None:
    rows = read(
        paragraphs(
            "3.1 Accounts are named.",
            "3.2 The agency shall:",
            "(a) verify identity before issuing credentials;",
            "(b) revoke credentials within one day; and",
            "3.3 Passwords are at least 14 characters.",
        )
    )
    assert items(rows) == [
        ("3.1", "Accounts are named."),
        ("3.2(a)", "The agency shall: verify identity before issuing credentials;"),
        ("3.2(b)", "The agency shall: revoke credentials within one day; and"),
        ("3.3", "Passwords are at least 14 characters."),
    ]


def test_a_labelled_clause_that_explains_the_document_is_a_note() -> None:
    rows = read(
        [
            Block("heading", "Section 1 \u2014 Purpose and Authority", "p1", level=1),
            *paragraphs("1.1 This Part sets out controls.", "1.2 It applies to all systems."),
            Block("heading", "Section 2 \u2014 Access", "p4", level=1),
            *paragraphs("2.1 Access is reviewed.", "2.2 Accounts are named."),
        ]
    )
    assert [i for i, _ in items(rows)] == ["2.1", "2.2"]


def test_the_footer_is_left_out_and_said_and_each_skip_quotes_its_words(tmp_path: Path) -> None:
    logistics = next(p for p in POLICIES if p.name == "logistics")
    rows = plain_rows(logistics.save("pdf", tmp_path), "ISP-01")
    said = "\n".join(rows.split.lines() if rows.split else [])
    assert "left out as page headers and footers: " in said
    assert "'isp-# information security policy, version #.# page #' (4 pages)" in said
    skips = [r for r in rows.records.values() if isinstance(r, Skip)]
    assert skips and all(s.message.startswith("page ") and "\u201c" in s.message for s in skips)
    word = plain_rows(logistics.save("docx", tmp_path), "ISP-01")
    skipped = [r.message for r in word.records.values() if isinstance(r, Skip)]
    assert any(m.startswith("paragraph ") and "\u201cNote:" in m for m in skipped), skipped


def test_a_skipped_paragraph_in_a_requirements_words_is_counted_in_a_warning() -> None:
    segmenter = Segmenter()
    for block in paragraphs("1.1 A.", "1.2 B.", "Note: passwords must never be shared."):
        list(segmenter.feed(block))
    list(segmenter.end())
    assert any("1 of the 1 skipped" in line for line in segmenter.split.lines())


def test_two_texts_under_one_id_are_both_quoted() -> None:
    registry = ChunkRegistry()

    def section(text: str, line: int) -> Section:
        parsed = parse_item(line, item(chunk_id="plain:x:VI.a", content={"text": text}))
        assert isinstance(parsed, Section)
        return parsed

    registry.admit(section("Backups are encrypted.", 1))
    refused = registry.admit(section("Backups are kept for 30 days.", 2))
    assert isinstance(refused, Rejection)
    assert "\u201cBackups are encrypted.\u201d" in refused.message
    assert "\u201cBackups are kept for 30 days.\u201d" in refused.message


def _place(clauses: Clauses, text: str, led: bool = False) -> str:
    label = candidate(text)
    assert label is not None and label.lone and clauses.fits(label, led)
    placed = clauses.enter(label, led)
    assert placed is not None
    return placed[1]


def test_sub_clauses_nest_as_a_code_numbers_them() -> None:
    """A city's code: "(d)" > "(2)" > "(i)", cited "4(d)(2)(i)"; a label that goes on from
    an open level returns to it; a lone "(i)" after "(h)" is the letter, unless the clause
    before it leads in, when it opens the Roman numerals below."""
    clauses = Clauses()
    clauses.under("4")
    assert _place(clauses, "(a) Access is granted to authorized users.") == "4(a)"
    assert _place(clauses, "(d) Each department head shall\u2014") == "4(d)"  # (b), (c) repealed
    assert _place(clauses, "(1) designate a coordinator;", led=True) == "4(d)(1)"
    assert _place(clauses, "(2) notify the IT Department\u2014") == "4(d)(2)"
    assert _place(clauses, "(i) not later than the last day;", led=True) == "4(d)(2)(i)"
    assert _place(clauses, "(ii) within five days.") == "4(d)(2)(ii)"
    assert _place(clauses, "(3) review access rights.") == "4(d)(3)"
    assert _place(clauses, "(e) Unused accounts are disabled.") == "4(e)"
    assert _place(clauses, "(h) Privileged accounts shall\u2014") == "4(h)"
    assert _place(clauses, "(i) The IT Department keeps a record.") == "4(i)"
    clauses.under("5")
    assert clauses.levels == [] and clauses.cite(0) == "5"


def test_a_heading_cites_its_article_or_its_control() -> None:
    assert cited_by("Art. 4 Access management") == "Art. 4"
    assert cited_by("Sec. 4. Access control.") == "Sec. 4"
    assert cited_by("A.5.1.1 Policies for information security") == "A.5.1.1"
    assert cited_by("3. Passwords and Authentication") is None  # a chapter's number
    assert cited_by("Access control") is None


def test_an_ordinal_label_keeps_its_degree_sign_and_a_title_over_sub_clauses_is_none() -> None:
    label = candidate("7.1\u00b0 Access to hotel systems is granted on request.")
    assert label is not None and label.label == "7.1\u00b0" and not label.lone
    assert titles("A.12.3.1", "Information backup", "A.12.3.1.1")
    assert not titles("A.12.3.1", "Backups are taken daily.", "A.12.3.1.1")
    assert not titles("A.12.3", "Information backup", "A.12.4")  # no sub-clause of it
    assert ends_a_lead_in("Passwords shall\u2014") and ends_a_lead_in("as follows:")
    assert is_title("Incident Reporting.") and not is_title("Backups are encrypted.")
    assert [parent_of(x) for x in ("4.a", "6.a.(1)", "11")] == ["4", "6.a", "11"]


def test_a_lone_label_that_fits_no_open_level_is_a_clause_of_its_own() -> None:
    """A directive's "11." after "10.b.(2)": no sub-clause of the clause before."""
    clauses = Clauses()
    clauses.under("10.b")
    label = candidate("11. Foreign Travel. Personnel report travel.")
    assert label is not None and label.lone and clauses.enter(label) is None


def test_a_sanctions_clause_is_a_note_unless_it_obliges() -> None:
    """The university's "9.1 Breaches of this policy may be dealt with ...": what follows a
    breach explains; a clause that obliges someone to act on one is a rule."""
    assert is_note("Breaches of this policy may be dealt with under the disciplinary code.")
    assert is_note("Failure to comply with this standard may result in dismissal.")
    assert not is_note("Breaches of this policy must be reported to the DPO within 24 hours.")
