"""Is a paragraph a requirement? Learnt from sentences, not from a word list.

A paragraph with no label of its document's own numbering and no id is an item only when
its wording says it requires something. A word list ("must", "shall", ...) misses the
forms policies also use: a plain order ("Encrypt backups at rest."), a control stated as
fact ("Access rights are reviewed every quarter."), "We rotate keys yearly." This module
reads the wording with a classifier fitted on a packaged corpus of policy sentences,
requirements in many wordings against purpose, scope, definitions, notes, background and
the like (`data/wording/sentences.jsonl`; the data README says how it was written).

The classifier is a logistic regression over the corpus's words and word pairs (counts,
scaled to unit length), fitted by scikit-learn the first time it is asked (the same
sentences give the same weights on every machine) and its weights kept in the home's
cache, named by the corpus's digest: there is no model to build or go stale. It is
applied here in plain Python, a weight a known n-gram: a paragraph costs a pass over its
first MAX_CHARS characters, however many a document holds. How it reads each house
style: docs/quality.md ("Is this a requirement?").
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tempfile
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

from librarian.paths import librarian_home, packaged_data

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


# A text's words as scikit-learn's CountVectorizer reads them by default (lower-cased,
# two word characters or more), and its word pairs.
_TOKEN = re.compile(r"(?u)\b\w\w+\b")


def analyse(text: str) -> list[str]:
    """A text's words and word pairs: the features the classifier reads."""
    words = _TOKEN.findall(text.lower())
    return words + [f"{a} {b}" for a, b in pairwise(words)]


@dataclass(frozen=True)
class WordingModel:
    """A fitted classifier: each known n-gram's weight, and the intercept."""

    weights: Mapping[str, float]
    intercept: float

    def probability(self, text: str) -> float:
        """How likely `text` is a requirement, read from its wording alone."""
        counts = Counter(g for g in analyse(text[:MAX_CHARS]) if g in self.weights)
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

    words = CountVectorizer(analyzer=analyse)
    counts = normalize(words.fit_transform(texts))
    model = LogisticRegression(C=strength, max_iter=2000).fit(counts, labels)
    coefficients = model.coef_[0]
    weights = {g: float(coefficients[i]) for g, i in words.vocabulary_.items()}
    return WordingModel(weights, float(model.intercept_[0]))


def cache_file() -> Path:
    """Where the fitted weights are kept: the home's cache (`LIBRARIAN_HOME`, else the
    user data directory: a reader is not told a command's `--home`), named by the
    corpus's digest and the fit's strength (a changed corpus is fitted again)."""
    digest = hashlib.sha256(CORPUS.read_bytes()).hexdigest()[:16]
    return librarian_home().cache / f"wording-{digest}-c{STRENGTH:g}.json"


@cache
def _model() -> WordingModel:
    """The classifier fitted on the corpus: the weights the home's cache keeps (JSON, read
    in milliseconds), else fitted now (scikit-learn's import is most of two seconds a
    process) and kept there; a home that cannot be written is fitted again next time."""
    path = cache_file()
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        return WordingModel(dict(kept["weights"]), float(kept["intercept"]))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    model = fitted(*corpus())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, part = tempfile.mkstemp(dir=path.parent, suffix=".json.part")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"weights": model.weights, "intercept": model.intercept}, handle)
        os.replace(part, path)
    except OSError:
        pass
    return model


def requirement_probability(text: str) -> float:
    """How likely `text` is a requirement, read from its wording alone."""
    return _model().probability(text)


def reads_as_requirement(text: str) -> bool:
    """Whether `text`'s wording reads as a requirement (`THRESHOLD`)."""
    return requirement_probability(text) >= THRESHOLD
