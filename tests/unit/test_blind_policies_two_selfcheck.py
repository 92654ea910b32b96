"""The second set of blind test documents (tests/blind_policies_two.py) build and say what
they contain.

This checks the documents only, not the segmenter: each policy saves as Word, PDF and PDF
without an outline; the files open; every requirement and every note is in the Word text
(tables included); the PDF shows the running furniture and every requirement."""

from __future__ import annotations

import re
from pathlib import Path

import docx
import pytest
from pypdf import PdfReader

from tests.blind_policies_two import POLICIES, BlindPolicy


def _docx_text(path: Path) -> str:
    document = docx.Document(str(path))
    lines = [paragraph.text for paragraph in document.paragraphs]
    for table in document.tables:
        lines.extend(cell.text for row in table.rows for cell in row.cells)
    return "\n".join(lines)


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_three_new_house_styles() -> None:
    assert [policy.name for policy in POLICIES] == ["university", "hospital", "supplier"]


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name)
def test_policy_saves_and_opens(policy: BlindPolicy, tmp_path: Path) -> None:
    assert 20 <= len(policy.requirements) <= 35
    assert 5 <= len(policy.notes) <= 10
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


def test_cites_unique_and_texts_unlabelled() -> None:
    for policy in POLICIES:
        cites = [e.cite for e in policy.requirements if e.cite is not None]
        assert len(cites) == len(set(cites)), policy.name
        for expected in policy.requirements:
            assert expected.text.strip() == expected.text
            if expected.label is not None:
                assert not expected.text.startswith(expected.label)
            for furniture in policy.furniture:
                assert furniture not in expected.text


def test_word_letters_the_automatic_list(tmp_path: Path) -> None:
    """University 6.2(a)-(c) are lettered by Word: the paragraphs carry numbering, not
    the letter."""
    university = next(p for p in POLICIES if p.name == "university")
    auto = [e for e in university.requirements if e.cite and e.cite.startswith("6.2(")]
    assert [e.label for e in auto] == ["a.", "b.", "c."]
    body = docx.Document(str(university.save("docx", tmp_path)))
    numbered = [p for p in body.paragraphs if p._p.pPr is not None and p._p.pPr.numPr is not None]
    assert [p.text for p in numbered] == [e.text for e in auto]
