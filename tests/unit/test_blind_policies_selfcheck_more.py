"""The third and fourth sets of blind test documents (tests/blind_policies_three.py,
tests/blind_policies_four.py) build and say what they contain: each policy saves as Word,
PDF and PDF without an outline, every requirement is in the Word text and in both PDFs,
the running furniture is in the PDFs, and each requirement's citation is its own. The
documents only, not the segmenter."""

from __future__ import annotations

from pathlib import Path

import pytest
from pypdf import PdfReader

from tests.blind_policies_four import POLICIES as FOURTH
from tests.blind_policies_three import POLICIES, BlindPolicy
from tests.unit.test_blind_policies_two_selfcheck import _docx_text, _flat


def test_three_more_house_styles_and_three_more() -> None:
    assert [policy.name for policy in POLICIES] == ["municipal", "annex", "charter"]
    assert [policy.name for policy in FOURTH] == ["military", "handbook", "register"]


@pytest.mark.parametrize("policy", (*POLICIES, *FOURTH), ids=lambda p: p.name)
def test_policy_saves_and_opens(policy: BlindPolicy, tmp_path: Path) -> None:
    assert 20 <= len(policy.requirements) <= 35 and policy.notes and policy.furniture
    cites = [e.cite for e in policy.requirements if e.cite is not None]
    assert len(cites) == len(set(cites))
    text = _flat(_docx_text(policy.save("docx", tmp_path)))
    for expected in [*(e.text for e in policy.requirements), *policy.notes]:
        assert _flat(expected)[:30] in text, expected
    for kind in ("pdf", "bare.pdf"):
        reader = PdfReader(policy.save(kind, tmp_path))
        assert bool(reader.outline) is (kind == "pdf")
        flat = _flat(" ".join(page.extract_text() for page in reader.pages))
        for expected in [*(e.text for e in policy.requirements), *policy.furniture]:
            assert _flat(expected)[:30] in flat, expected
