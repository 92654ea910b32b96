from __future__ import annotations

import pytest

from librarian.stages.explicit import find_references

HUB = {"616-305", "002-630", "760-764"}


@pytest.mark.parametrize(
    "text",
    [
        "See 616-305 for details.",
        "Mapped to CRE 616-305.",
        "Mapped to CRE:616-305",
        "Mapped to CRE-616-305",
        "mapped to cre 616-305",
        "(CRE 616-305)",
        "https://www.opencre.org/cre/616-305",
        "616-305",
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
