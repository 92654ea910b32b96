"""The calibration sample: which items a source's reviewers should decide first."""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence

from librarian.policy.cut import certifies
from librarian.policy.decision import DecisionPolicy

# How many decisions a source's calibration sample asks for at most: enough, all right, to
# certify a band (at least `min_reviewed` above any cut) with room for a few wrong ones.
CALIBRATION_SAMPLE = 40
# A calibration sample is drawn from at most this share of a source's items, the most
# confident first. Below it the model is too often wrong for a few dozen decisions to
# certify anything (docs/quality.md).
SAMPLE_REACH = 0.7


def certifiable_band(items: int, k: int, policy: DecisionPolicy) -> int:
    """How many of a source's most confident items `k` decisions drawn among them could
    certify, were they all right (the test at the band's bottom, `cut.certifies`): the
    band a review budget of `k` should be spent in. Never fewer than `k`, never more than
    the SAMPLE_REACH most confident. Reads no decision: a plan, not a promise."""
    reach = max(k, math.ceil(items * SAMPLE_REACH))
    level = policy.test_confidence()
    best = min(items, k)
    for band in range(k + 1, min(items, reach) + 1):
        if certifies(band, k, 0, policy.budget, level):
            best = band
    return best


def calibration_sample(
    confidences: Sequence[float], k: int, seed: str, policy: DecisionPolicy | None = None
) -> list[int]:
    """Which `k` of a source's items its reviewers should decide first (their indices):
    a probability sample of the band their decisions could certify.

    The band: the most confident items, as many as `k` right decisions could certify under
    `policy` (`certifiable_band`; without a policy, the SAMPLE_REACH most confident). It is
    cut into `k` strata of equal size (by confidence), and one item is drawn at random
    from each, seeded by `seed` (the source's key: the same source gets the same sample).
    So the reviewed items interleave the pending ones at every confidence, any cut in the
    band has evidence just above it, and within a stratum every item was as likely to be
    drawn: the reviewed items speak for the pending ones of their band. The strata differ
    in size by at most one item, so the inclusion weights are equal to within that and
    the share wrong is estimated unweighted. Reads no label."""
    n = len(confidences)
    if k >= n:
        return list(range(n))
    order = sorted(range(n), key=lambda i: (-confidences[i], i))
    size = (
        certifiable_band(n, k, policy)
        if policy is not None
        else max(k, math.ceil(n * SAMPLE_REACH))
    )
    band = order[:size]
    draw = random.Random(hashlib.sha256(seed.encode("utf-8")).hexdigest())
    picked = [draw.choice(band[s * len(band) // k : (s + 1) * len(band) // k]) for s in range(k)]
    return sorted(picked)
