"""The blind test documents (tests/blind_policies.py) build and say what they contain.

This checks the documents only, not the segmenter: each policy saves as Word, PDF and PDF
without an outline; the files open; every requirement, and every note, is in the Word
text; the version-2 diff names labels that exist."""

from __future__ import annotations

import re
from pathlib import Path

import docx
import pytest
from pypdf import PdfReader

from tests.blind_policies import POLICIES, BlindPolicy, version_two

_V2, _DIFF = version_two()


def _docx_text(path: Path) -> str:
    document = docx.Document(str(path))
    return "\n".join(paragraph.text for paragraph in document.paragraphs)


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("policy", [*POLICIES, _V2], ids=lambda p: p.name)
def test_policy_saves_and_opens(policy: BlindPolicy, tmp_path: Path) -> None:
    assert 25 <= len(policy.requirements) <= 40
    assert 6 <= len(policy.notes) <= 14
    assert policy.furniture

    word = policy.save("docx", tmp_path)
    assert word == tmp_path / f"{policy.name}.docx"
    text = _docx_text(word)
    for expected in policy.requirements:
        assert expected.text[:30] in text, expected
    for note in policy.notes:
        assert note[:30] in text, note

    for kind in ("pdf", "bare.pdf"):
        path = policy.save(kind, tmp_path)
        assert path.name == f"{policy.name}.{kind}"
        reader = PdfReader(path)
        assert reader.pages
        assert bool(reader.outline) is (kind == "pdf")
        flat = _flat(" ".join(page.extract_text() for page in reader.pages))
        for furniture in policy.furniture:
            assert furniture in flat, furniture
        for expected in policy.requirements:
            assert _flat(expected.text)[:30] in flat, expected


def test_labels_are_unique_and_texts_unlabelled() -> None:
    for policy in (*POLICIES, _V2):
        cites = [e.cite for e in policy.requirements if e.cite is not None]
        assert len(cites) == len(set(cites)), policy.name
        for expected in policy.requirements:
            assert expected.text.strip() == expected.text
            if expected.label is not None:
                assert not expected.text.startswith(expected.label)
            for furniture in policy.furniture:
                assert furniture not in expected.text


def test_version_two_diff_names_real_labels() -> None:
    v1 = next(p for p in POLICIES if p.name == "logistics")
    v1_labels = {e.label for e in v1.requirements}
    v2_labels = {e.label for e in _V2.requirements}
    assert set(_DIFF["removed"]) <= v1_labels
    assert set(_DIFF["changed"]) <= v1_labels
    assert set(_DIFF["added"]) <= v2_labels
    assert len(_DIFF["removed"]) == 2 and len(_DIFF["changed"]) == 3
    assert len(_DIFF["added"]) == 2
    v1_texts = {e.text for e in v1.requirements}
    v2_texts = {e.text for e in _V2.requirements}
    new = {e.label for e in _V2.requirements if e.text not in v1_texts}
    # The reworded clauses keep their letters in version 2 (no edit above them in their topic).
    assert new == set(_DIFF["added"]) | set(_DIFF["changed"])
    gone = {e.label for e in v1.requirements if e.text not in v2_texts}
    assert gone == set(_DIFF["removed"]) | set(_DIFF["changed"])
