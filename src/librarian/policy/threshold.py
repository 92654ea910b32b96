"""Training's global cut: the one a source's items are decided with before its own
reviewers certify one (`train` reads it off out-of-fold confidences)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

# The threshold is read off prose rows when they give at least this many auto-links at
# it; below that, off prose and title rows together (a cut over 5 rows proves nothing).
MIN_THRESHOLD_SUPPORT = 20


def choose_threshold(
    confidence: Sequence[float],
    correct: Sequence[bool],
    max_wrong_rate: float,
    min_support: int = MIN_THRESHOLD_SUPPORT,
) -> float:
    """The lowest cut the fixed sequence reaches before its first failure, as a source's
    cut is chosen (`policy.cut`): the observed confidences from the top down, a cut
    passing when its auto-links are wrong at most `max_wrong_rate` of the time. A cut
    with fewer than `min_support` rows at or above it is not tested (its failure does not
    end the sequence); the first tested failure does. If no cut passes, 1.0 (nothing
    auto-links) rather than a threshold the data does not support."""
    conf: NDArray[np.float64] = np.asarray(confidence, dtype=np.float64)
    hit = np.asarray(correct, dtype=bool)
    order = np.argsort(-conf, kind="stable")
    best = 1.0
    wrong = 0
    for n, idx in enumerate(order, start=1):
        wrong += int(not hit[idx])
        # Only cut between distinct confidences, so every row at the cut is included.
        if n < len(order) and conf[order[n]] == conf[idx]:
            continue
        if wrong / n <= max_wrong_rate:
            best = float(conf[idx])
        elif n >= min_support:
            break  # the first tested failure ends the sequence
    return best


def pick_threshold(
    styles: Sequence[str], correct: Sequence[bool], oof: Sequence[float], max_wrong: float
) -> tuple[float, str]:
    """The lowest out-of-fold confidence at which at most `max_wrong` of auto-links were
    wrong: on prose rows when they support it, else on prose and titles together."""
    prose = [(c, ok) for style, ok, c in zip(styles, correct, oof, strict=True) if style == "prose"]
    if prose:
        threshold = choose_threshold([c for c, _ in prose], [ok for _, ok in prose], max_wrong)
        if sum(c >= threshold for c, _ in prose) >= MIN_THRESHOLD_SUPPORT:
            return threshold, f"prose rows out of fold, <= {max_wrong:.0%} wrong"
    threshold = choose_threshold(oof, list(correct), max_wrong)
    return threshold, f"prose and title rows out of fold, <= {max_wrong:.0%} wrong"
