"""Issue 58, the fifth blind set's house styles read by rules that hold for any document
(each fails without its rule): an ISO standard's capital NOTE and EXAMPLE, a statute's
"§ 4" on a line of its own above its title, its "(2)" paragraphs and the "1." points
under them as two levels, a paragraph that runs on into its points, and an SOP's steps."""

from __future__ import annotations

from librarian.pipeline.shapes.notes import is_note
from librarian.pipeline.shapes.segment import Block, marked
from tests.unit.test_labels import items, paragraphs, read


def test_a_standards_capital_note_and_example_are_notes_but_a_sentence_is_not() -> None:
    assert is_note("NOTE Clause 4.3 does not require passwords to be changed.")
    assert is_note("NOTE 2 The list is not exhaustive.")
    assert is_note("EXAMPLE A supplier's engineer telephones the control room.")
    assert not is_note("Note that users must lock their screens.")
    assert not is_note("NOTEBOOKS must be encrypted.")


def test_a_section_named_on_its_own_line_cites_the_paragraphs_under_its_title() -> None:
    """A statute's PDF without bookmarks: "§ 4", then its title set as a heading."""
    blocks = [
        Block("paragraph", "\u00a7 4", "line 1"),
        Block("heading", "Access rights", "line 2", 1),
        *paragraphs(
            "(1) Access rights are granted only where the employee's tasks require them.",
            "(2) Supervisors shall review access rights once a year.",
        ),
    ]
    assert [i for i, _ in items(read(blocks))] == ["\u00a7 4(1)", "\u00a7 4(2)"]


def test_points_under_a_paragraph_are_a_level_below_it_and_the_next_paragraph_returns() -> None:
    """ "(2)" paragraphs and "1." points count alike but are set off differently: two
    levels. A paragraph that runs on into its points ("Passwords must") leads into them."""
    blocks = [
        Block("heading", "\u00a7 5 Passwords", "line 1", 1),
        *paragraphs(
            "(1) Passwords must",
            "1. consist of at least 12 characters,",
            "2. not be disclosed to other persons, and",
            "(2) Access from outside requires two-factor authentication.",
        ),
    ]
    read_as = items(read(blocks))
    assert [i for i, _ in read_as] == ["\u00a7 5(1)(1)", "\u00a7 5(1)(2)", "\u00a7 5(2)"]
    assert read_as[0][1] == "Passwords must consist of at least 12 characters,"


def test_an_sops_steps_are_list_items() -> None:
    for typed in (
        "Step 3 On the first day, the RA agent verifies",
        "Step 3\tVerify",
        "STEP 3: Verify",
    ):
        assert marked(Block("paragraph", typed, "p")).kind == "numbered"
    assert marked(Block("paragraph", "Step 2 requires a form.", "p")).kind == "paragraph"


def test_a_step_is_cited_by_its_procedure_and_its_number() -> None:
    """A person cites "Procedure B, Step 2", not the heading's slug and a count: the
    procedure by the designation its heading opens with, else the heading's slug, and
    each step by its own number, as typed."""
    blocks = [
        Block("heading", "Procedure A \u2013 New starters", "line 1", 1),
        *paragraphs(
            "Step 1 The line manager submits an access request.",
            "Step 2 The asset owner approves or rejects the request.",
        ),
        Block("heading", "Procedure B: Movers", "line 4", 1),
        *paragraphs("Step 1 The new line manager submits the form before the move."),
        Block("heading", "Leavers", "line 6", 1),
        *paragraphs("STEP 4: Disable all of the leaver's accounts by 17:00."),
    ]
    assert [i for i, _ in items(read(blocks))] == [
        "Procedure A, Step 1",
        "Procedure A, Step 2",
        "Procedure B, Step 1",
        "leavers, Step 4",
    ]


def test_a_step_numbered_again_under_one_heading_is_counted_not_lost() -> None:
    """Two lists of steps under one heading: the second "Step 1" would share the first's
    id (and the run reads a chunk twice only once); it is counted instead."""
    blocks = [
        Block("heading", "Leavers", "line 1", 1),
        *paragraphs(
            "Step 1 The line manager completes the leaver checklist.",
            "Step 1 The RA agent removes the position from the smartcard.",
        ),
    ]
    read_as = items(read(blocks))
    assert [i for i, _ in read_as] == ["leavers, Step 1", "leavers-1"]
    assert len({i for i, _ in read_as}) == 2


def test_text_over_sub_sections_introduces_them_unless_it_requires_something() -> None:
    """ "6. Procedure", a sentence on how the steps are set out, then "Procedure A": the
    sentence introduces the sub-sections (a note); a duty there stays an item."""
    blocks = [
        Block("heading", "Procedure", "line 1", 1),
        *paragraphs("Each procedure below is set out as numbered steps."),
        Block("heading", "Procedure A: New starters", "line 3", 2),
        *paragraphs("Step 1 The line manager submits an access request."),
        Block("heading", "Reviews", "line 5", 1),
        *paragraphs("Access rights must be reviewed every quarter."),
        Block("heading", "Quarterly review", "line 7", 2),
        *paragraphs("Step 1 The asset owner lists the accounts."),
    ]
    assert [i for i, _ in items(read(blocks))] == [
        "Procedure A, Step 1",
        "reviews-1",
        "reviews/quarterly-review, Step 1",
    ]
