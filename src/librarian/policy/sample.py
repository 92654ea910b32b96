"""The calibration sample: which items a source's reviewers should decide first."""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence

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
    certify, were they as right as the policy tolerates (the test at the band's bottom,
    `DecisionPolicy.certifies`): the band a review budget of `k` should be spent in. Never
    fewer than `k`, never more than the SAMPLE_REACH most confident. Reads no decision: a
    plan, not a promise."""
    reach = max(k, math.ceil(items * SAMPLE_REACH))
    wrong = min(k, policy.tolerated_wrong)
    best = min(items, k)
    for band in range(k + 1, min(items, reach) + 1):
        if policy.certifies(band, k, wrong, k - wrong):
            best = band
    return best


def calibration_sample(
    confidences: Sequence[float], k: int, seed: str, policy: DecisionPolicy | None = None
) -> list[int]:
    """Which `k` of a source's items its reviewers should decide first (their indices):
    a simple random sample of the band their decisions could certify.

    The band: the most confident items, as many as `k` right decisions could certify under
    `policy` (`certifiable_band`; without a policy, the SAMPLE_REACH most confident). The
    `k` are drawn from it at random, seeded by `seed` (the source's key: the same source
    gets the same sample). A simple random sample of the band is one of the items above
    any cut in it too (given how many fall there), which is what the exact test of a cut
    assumes (`exact.certifies`). One item a stratum of equal size (the design before issue
    59) is not: where the band is barely larger than `k`, which items stay open is all
    but fixed, and `make risk-check` saw a wrong one linked in 9 of 20 draws. Reads no
    label."""
    n = len(confidences)
    if k >= n:
        return list(range(n))
    order = sorted(range(n), key=lambda i: (-confidences[i], i))
    size = (
        certifiable_band(n, k, policy)
        if policy is not None
        else max(k, math.ceil(n * SAMPLE_REACH))
    )
    draw = random.Random(hashlib.sha256(seed.encode("utf-8")).hexdigest())
    return sorted(draw.sample(order[:size], k))
