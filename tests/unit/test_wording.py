"""Issue 58, item 1: "is this a requirement?" learnt from data, not from a word list. A
paragraph with no label and no id is an item when its wording reads as a requirement:
the word list's words, or the classifier fitted on the packaged corpus (a plain order,
a control stated as fact, "we ..."). What it reads per house style: docs/quality.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from librarian.pipeline.plain import plain_rows
from librarian.pipeline.shapes.segment import states_requirement
from librarian.pipeline.shapes.wording import corpus, reads_as_requirement
from librarian.schemas.records import Skip

# Requirements none of whose words the word list knows, and text that obliges no one.
ORDERS_AND_FACTS = (
    "Revoke access for leavers on their last working day.",
    "Access rights are reviewed every quarter by the system owner.",
    "We rotate signing keys every year.",
    "Only approved software is installed on company laptops.",
)
NO_ONE_OBLIGED = (
    "This standard sets out how we manage access to our systems.",
    "Phishing remains the most common way into a network.",
    "Version 2.1, approved by the Security Committee in March 2026.",
)


def test_the_classifier_reads_what_the_word_list_misses() -> None:
    texts, labels = corpus()
    assert len(texts) == len(labels) >= 900 and 0.4 < sum(labels) / len(labels) < 0.6
    for text in ORDERS_AND_FACTS:
        assert not states_requirement(text) and reads_as_requirement(text), text
    for text in NO_ONE_OBLIGED:
        assert not reads_as_requirement(text), text


def test_an_unnumbered_document_reads_orders_and_facts_as_requirements(tmp_path: Path) -> None:
    """A document with no numbering: each requirement an item, whatever its wording; the
    purpose, the context and a note's lead-in with the paragraph it introduces are not
    (before: only the paragraph that says "must" was an item)."""
    path = tmp_path / "standard.md"
    path.write_text(
        "# Access standard\n\n"
        + f"{NO_ONE_OBLIGED[0]}\n\n{NO_ONE_OBLIGED[1]}\n\n"
        + "\n\n".join(ORDERS_AND_FACTS)
        + "\n\nPasswords must be at least 14 characters long.\n\n"
        + "Implementation guidance:\n\n"
        + "Temporary accounts are created by the service desk and expire after a week.\n"
    )
    rows = plain_rows(path, "Standard")
    notes = {line for line, record in rows.records.items() if isinstance(record, Skip)}
    items = [i["content"]["text"] for line, i in rows.items.items() if line not in notes]
    assert items == [*ORDERS_AND_FACTS, "Passwords must be at least 14 characters long."]


def test_the_classifier_applied_here_is_the_one_fitted() -> None:
    """Applied in plain Python (a weight a known n-gram) for its speed, it says what the
    fitted logistic regression says, sentence for sentence."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import normalize

    from librarian.pipeline.shapes.wording import STRENGTH, fitted

    texts, labels = corpus()
    words = CountVectorizer(ngram_range=(1, 2))
    counts = normalize(words.fit_transform(texts))
    reference = LogisticRegression(C=STRENGTH, max_iter=2000).fit(counts, labels)
    expected = reference.predict_proba(counts)[:, 1]
    model = fitted(texts, labels)
    got = [model.probability(t) for t in texts]
    assert max(abs(a - b) for a, b in zip(got, expected, strict=True)) < 1e-9


def test_the_fitted_weights_are_kept_in_the_homes_cache_and_a_bad_copy_is_fitted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fitting costs scikit-learn's import (most of two seconds) in every process that
    reads a document; the weights are kept in the home's cache, named by the corpus's
    digest, and read back as they were fitted. A damaged copy is fitted again."""
    from librarian.pipeline.shapes import wording

    monkeypatch.setenv("LIBRARIAN_HOME", str(tmp_path))
    wording._model.cache_clear()
    try:
        texts = list(ORDERS_AND_FACTS + NO_ONE_OBLIGED)
        fitted_now = [wording.requirement_probability(t) for t in texts]
        kept = wording.cache_file()
        assert kept.parent == tmp_path / "cache" and kept.is_file()
        wording._model.cache_clear()
        assert [wording.requirement_probability(t) for t in texts] == fitted_now
        kept.write_text('{"weights": ')
        wording._model.cache_clear()
        assert [wording.requirement_probability(t) for t in texts] == fitted_now
        assert json.loads(kept.read_text())["intercept"] == wording._model().intercept
    finally:
        wording._model.cache_clear()
