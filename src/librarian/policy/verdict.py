"""C.9 decide: pure and total over what the stages before it found.

`decide(confidence, candidates, flags, threshold)` links the first candidate when its
confidence reaches the threshold, its source's cut certifies it, and nothing was flagged;
otherwise it says why a person must look. Out-of-range input (a confidence or threshold
outside [0, 1], NaN) is refused with ValueError, never decided.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from librarian.schemas.envelopes import AdversarialFlag, ReasonCode


@dataclass(frozen=True)
class Decision:
    linked: bool
    reason: ReasonCode | None = None  # why a person must look (None when linked)


LINK = Decision(linked=True)


def _in_unit_range(name: str, value: float) -> None:
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} {value!r} is outside [0, 1]")


def decide(
    confidence: float,
    candidates: Sequence[str],
    flags: Sequence[AdversarialFlag],
    threshold: float,
    update_conflict: bool = False,
    certified: bool = True,
) -> Decision:
    """`candidates`: CRE ids, best first; `confidence`: the first one's (0 when none);
    `certified`: False when its source's cut does not cover it (a suggestion its source's
    decisions taught, which the cut's test never saw), whatever its confidence."""
    _in_unit_range("confidence", confidence)
    _in_unit_range("threshold", threshold)
    if flags:
        return Decision(False, ReasonCode.ADVERSARIAL_FLAG)
    if update_conflict:
        return Decision(False, ReasonCode.UPDATE_AMBIGUOUS)
    if not candidates:
        return Decision(False, ReasonCode.NO_CANDIDATES)
    if confidence < threshold or not certified:
        return Decision(False, ReasonCode.BELOW_THRESHOLD)
    return LINK
