"""The verifier: the confidence shown with a source's first suggestion, and read by its cut.

Linking a source as a whole gains top-1 and loses separation: the joint calibrator is
sure of the assignment, right or wrong, and its confidence ranks its own first
suggestions poorly. Two other readers of the same suggestion know more:

- the section read alone: the section-alone calibrator's confidence in the same CRE;
- the CRE's own words: the share of the content words of the CRE's name that the section
  says (the held-out standard's confident errors were a CRE whose name the text does not
  say, beside one whose name it does: "defined lifetime" of a time-based OTP), and its
  margin over the best other candidate's share.

The verifier is a logistic model over the joint confidence and these (VERIFIER_FEATURES).
`librarian train` fits it on framework-held-out rows (`training/verifier.py`; the readers
tried, kept and not, are in docs/quality.md); this module only applies it. It reorders
nothing: the first suggestion is the joint assignment's, only its number changes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from librarian.artifacts.calibrator import Calibrator, candidate_features

VERIFIER_FEATURES = ("joint", "alone_of_first", "name_overlap", "name_overlap_margin")

# Words that say nothing of which requirement a text is (kept short: a name's content
# words are few, and dropping one that matters costs more than keeping one that does not).
# fmt: off
STOP_WORDS = frozenset((
    "a", "an", "and", "any", "are", "as", "at", "be", "by", "can", "for", "from", "in",
    "is", "it", "its", "may", "must", "no", "not", "of", "on", "or", "shall", "should",
    "such", "that", "the", "their", "them", "these", "this", "those", "to", "use", "used",
    "using", "via", "when", "where", "which", "with", "within", "without",
))
# fmt: on
# Words are compared by their first STEM letters: "encrypt", "encrypted", "encryption".
STEM = 6
_WORD = re.compile(r"[a-z0-9]+")


def content_words(text: str) -> frozenset[str]:
    """A text's content words, lower-cased and cut to their stems."""
    return frozenset(
        w[:STEM] for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in STOP_WORDS
    )


def name_overlaps(words: frozenset[str], names: Sequence[frozenset[str]]) -> list[float]:
    """For each candidate's name (its content words), the share of them `words` holds."""
    return [len(words & name) / len(name) if name else 0.0 for name in names]


def features(
    joint: float, alone_of_first: float, overlaps: Sequence[float], first: int
) -> tuple[float, ...]:
    """VERIFIER_FEATURES of the first suggestion (`first`: its index among the candidates
    whose name overlaps are `overlaps`)."""
    others = [o for j, o in enumerate(overlaps) if j != first]
    margin = overlaps[first] - (max(others) if others else 0.0)
    return (joint, alone_of_first, overlaps[first], margin)


@dataclass(frozen=True)
class Verifier:
    """The fitted verifier (`model`, over VERIFIER_FEATURES) with the section-alone
    calibrator whose confidences it reads (`alone`: the models' calibrator.json) and
    the content words of each hub's name (`names`, by CRE id)."""

    model: Calibrator
    alone: Calibrator
    names: Mapping[str, frozenset[str]]

    @classmethod
    def of(cls, model: Calibrator, alone: Calibrator, names: Mapping[str, str]) -> Verifier:
        """From the hub's names (CRE id: name)."""
        return cls(model, alone, {cre: content_words(name) for cre, name in names.items()})

    def overlaps(self, text: str, cres: Sequence[str]) -> list[float]:
        """The share of each candidate's name the text says (read where the text is: a
        row waiting for C.5 keeps only these, `pipeline.compact`)."""
        names = [self.names.get(cre, frozenset()) for cre in cres]
        return name_overlaps(content_words(text), names)

    def confidence(
        self,
        overlaps: Sequence[float],
        scores: Sequence[float],
        evidence: Sequence[float] | None,
        joint: float,
        first: int,
    ) -> float:
        """The shown confidence of the candidate `first` (with the candidates' name
        `overlaps`, retrieval `scores` and `evidence`), whose joint confidence is `joint`."""
        # The first candidate's alone (its features read against the others'), not all 20.
        alone = self.alone.probability(candidate_features(scores, evidence)[first])
        return self.model.probability(features(joint, alone, overlaps, first))


def rescaled(probabilities: Sequence[float], first: int, verified: float) -> list[float]:
    """Each candidate's confidence once the first one's is `verified`: the others share
    what is left (1 - verified) as they shared it before (1 - the first's), so that no
    other can be more likely right than the first is wrong."""
    before = probabilities[first]
    left = (1.0 - verified) / (1.0 - before) if before < 1.0 else 0.0
    return [
        verified if j == first else min(1.0 - verified, p * left)
        for j, p in enumerate(probabilities)
    ]
