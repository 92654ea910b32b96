from __future__ import annotations

import pytest

from librarian.pipeline.explicit import find_references

HUB = {"616-305", "002-630", "760-764"}


@pytest.mark.parametrize(
    "text",
    [
        "Mapped to CRE 616-305.",
        "See CREs 616-305 for details.",
        "OpenCRE: 616-305",
        "Mapped to CRE:616-305",
        "Mapped to CRE-616-305",
        "mapped to cre 616-305",
        "(CRE 616-305)",
        "https://www.opencre.org/cre/616-305",
        "CRE 616-305 and again 616-305",
    ],
)
def test_single_known_citation(text: str) -> None:
    ref = find_references(text, HUB)
    assert ref is not None and ref.is_single_known and ref.known == ("616-305",)


@pytest.mark.parametrize(
    "text",
    [
        "Call 555-616-3050 now",  # phone number
        "Call +1 616-305-1234",  # phone number, longer
        "Order 1616-305 shipped",  # digits inside a longer number
        "Part 616-3055",
        "Released 2616-305",
        "Install v1.616-305",  # version
        "Version 616-305.2 is out",
        "On 2024-06-16 we met",  # date
        "Meeting 2023-616-305",  # date-like
        "ISBN 978-616-305-12",
        "Ticket ABC-616-305",
        "token 616-305abc",
        "See 123-456 for details.",  # bare id the hub does not know: not a citation
        "Nothing to see here.",
        # A bare id the hub knows is still no citation without words that name a CRE.
        "616-305",
        "See 616-305 for details.",
        "Invoice no. 616-305 was paid on time.",
        "The match ended 616-305 after extra time.",
        "Read the release 616-305 notes before upgrading.",
        "The CRE list was updated. Invoice 616-305 is unrelated.",  # another sentence
    ],
)
def test_not_a_citation(text: str) -> None:
    assert find_references(text, HUB) is None


def test_unknown_prefixed_id_is_flagged() -> None:
    ref = find_references("This maps to CRE 999-999.", HUB)
    assert ref is not None and not ref.is_single_known
    assert ref.unknown == ("999-999",) and ref.known == ()


def test_several_distinct_ids_conflict() -> None:
    ref = find_references("Covered by CRE 616-305 and 760-764.", HUB)
    assert ref is not None and not ref.is_single_known
    assert ref.known == ("616-305", "760-764")


def test_known_and_unknown_together() -> None:
    ref = find_references("CRE 616-305 or CRE 111-222?", HUB)
    assert ref is not None
    assert ref.known == ("616-305",) and ref.unknown == ("111-222",)


@pytest.mark.parametrize(
    "text",
    [
        "This control does not satisfy CRE 616-305.",
        "Unlike CRE 616-305, tokens are kept after login.",
        "The design never meets CRE:616-305",
        "It isn't covered by CRE 616-305",
    ],
)
def test_a_negated_citation_is_doubtful(text: str) -> None:
    ref = find_references(text, HUB)
    assert ref is not None and ref.negated and ref.doubtful


@pytest.mark.parametrize(
    ("text", "hidden"),
    [
        ("Mapped to CRE 616\u200b-305.", ["U+200B"]),
        ("Mapped to \u202eCRE 616-305.", ["U+202E"]),
        ("Mapped to CRE\u2060 616-305.", ["U+2060"]),
    ],
)
def test_hidden_characters_in_a_citation_are_seen_through_and_reported(
    text: str, hidden: list[str]
) -> None:
    ref = find_references(text, HUB)
    assert ref is not None and ref.known == ("616-305",)
    assert list(ref.hidden) == hidden and ref.doubtful


def test_a_plain_citation_is_not_doubtful() -> None:
    ref = find_references("Mapped to CRE 616-305: session tokens rotate at login.", HUB)
    assert ref is not None and not ref.doubtful
