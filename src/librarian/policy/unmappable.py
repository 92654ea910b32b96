"""The unmappable gate: a section going to review that no CRE covers.

Its best hub cosine lies below the cut `train` learnt leave-one-framework-out (the 5th
percentile of linked sections' best cosines; `--unmappable-cut`, docs/quality.md)."""

from __future__ import annotations

from librarian.policy.verdict import Decision
from librarian.schemas.envelopes import ReasonCode


def unmappable(decision: Decision, best_cosine: float, cut: float) -> bool:
    """Whether a section the verdict sent to review because no suggestion reached the cut
    is one no CRE covers."""
    return decision.reason == ReasonCode.BELOW_THRESHOLD and best_cosine < cut
