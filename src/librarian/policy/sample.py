"""The calibration sample: which items a source's reviewers should decide first."""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence

# How many decisions a source's calibration sample asks for: enough, all right, to certify
# a band (at least `min_reviewed` above any cut) with room for a few wrong ones.
CALIBRATION_SAMPLE = 40
# A calibration sample is drawn from this share of a source's items, the most confident
# first: the band a cut can reach. Below it the model is too often wrong for a few dozen
# decisions to certify anything (docs/quality.md).
SAMPLE_REACH = 0.7


def calibration_sample(confidences: Sequence[float], k: int, seed: str) -> list[int]:
    """Which `k` of a source's items its reviewers should decide first (their indices):
    a probability sample of the band a cut can reach.

    The band of the SAMPLE_REACH most confident items is cut into `k` strata of equal
    size (by confidence), and one item is drawn at random from each, seeded by `seed`
    (the source's key: the same source gets the same sample). So the reviewed items
    interleave the pending ones at every confidence, any cut in the band has evidence
    just above it, and within a stratum every item was as likely to be drawn: the reviewed
    items speak for the pending ones of their band. The strata differ in size by at most
    one item, so the inclusion weights are equal to within that and the share wrong is
    estimated unweighted. Reads no label."""
    n = len(confidences)
    if k >= n:
        return list(range(n))
    order = sorted(range(n), key=lambda i: (-confidences[i], i))
    band = order[: max(k, math.ceil(n * SAMPLE_REACH))]
    draw = random.Random(hashlib.sha256(seed.encode("utf-8")).hexdigest())
    picked = [draw.choice(band[s * len(band) // k : (s + 1) * len(band) // k]) for s in range(k)]
    return sorted(picked)
