"""Is a paragraph a requirement? Learnt from sentences, not from a word list.

A paragraph with no label of its document's own numbering and no id is an item only when
its wording says it requires something. A word list ("must", "shall", ...) misses the
forms policies also use: a plain order ("Encrypt backups at rest."), a control stated as
fact ("Access rights are reviewed every quarter."), "We rotate keys yearly." This module
reads the wording with a classifier fitted on a packaged corpus of policy sentences,
requirements in many wordings against purpose, scope, definitions, notes, background and
the like (`data/wording/sentences.jsonl`; the data README says how it was written).

The classifier is a logistic regression over the corpus's words and word pairs (counts,
scaled to unit length), fitted once a process the first time it is asked (well under a
second; the same sentences give the same weights on every machine): there is no model
file to build or go stale. It is applied here in plain Python, a weight a known n-gram:
a paragraph costs a pass over its first MAX_CHARS characters, however many a document
holds. How it reads each house style: docs/quality.md ("Is this a requirement?").
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache

from librarian.paths import packaged_data

CORPUS = packaged_data("wording", "sentences.jsonl")
# At or above this probability a paragraph reads as a requirement: the lowest at which,
# each of the corpus's styles read by a classifier fitted on the others, at least 85% of
# what it reads as requirements are (chosen on the corpus alone; docs/quality.md).
THRESHOLD = 0.6
STRENGTH = 4.0  # the logistic regression's C
# What is read of a paragraph: a requirement says what it requires early; a longer text
# is read no further (a hostile file's cost stays a pass over each paragraph's start).
MAX_CHARS = 1_000


def corpus() -> tuple[list[str], list[bool]]:
    """The packaged sentences and whether each is a requirement."""
    texts, labels = [], []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            texts.append(str(row["text"]))
            labels.append(bool(row["requirement"]))
    return texts, labels


@dataclass(frozen=True)
class WordingModel:
    """A fitted classifier: each known n-gram's weight, and the intercept."""

    weights: Mapping[str, float]
    intercept: float
    analyse: Callable[[str], list[str]]  # a text's words and word pairs

    def probability(self, text: str) -> float:
        """How likely `text` is a requirement, read from its wording alone."""
        counts = Counter(g for g in self.analyse(text[:MAX_CHARS]) if g in self.weights)
        norm = math.sqrt(sum(n * n for n in counts.values()))
        score = self.intercept
        if norm:
            score += sum(self.weights[g] * n for g, n in counts.items()) / norm
        return 1.0 / (1.0 + math.exp(-score))


def fitted(texts: list[str], labels: list[bool], strength: float = STRENGTH) -> WordingModel:
    """A classifier fitted on `texts` (on the corpus, what `reads_as_requirement` uses;
    the evaluation fits it on parts of it)."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import normalize

    words = CountVectorizer(ngram_range=(1, 2))
    counts = normalize(words.fit_transform(texts))
    model = LogisticRegression(C=strength, max_iter=2000).fit(counts, labels)
    coefficients = model.coef_[0]
    weights = {g: float(coefficients[i]) for g, i in words.vocabulary_.items()}
    return WordingModel(weights, float(model.intercept_[0]), words.build_analyzer())


@cache
def _model() -> WordingModel:
    return fitted(*corpus())


def requirement_probability(text: str) -> float:
    """How likely `text` is a requirement, read from its wording alone."""
    return _model().probability(text)


def reads_as_requirement(text: str) -> bool:
    """Whether `text`'s wording reads as a requirement (`THRESHOLD`)."""
    return requirement_probability(text) >= THRESHOLD
