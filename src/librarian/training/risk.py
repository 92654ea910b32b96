"""The prior a source's cut starts from (`policy.DecisionPolicy.prior_weight`, `prior_scale`),
learnt by empirical Bayes across the frameworks held out in turn.

For each framework, its most confident bands (the top BANDS shares of its rows by
out-of-fold confidence) are bands a cut could certify. In each, the calibrator expects a
share wrong of mean(1 - confidence); the framework realised k wrong of n. The prior on a
band's share wrong is Beta(w * m, w * (1 - m)) with m = scale * expected: `scale` says how
far frameworks depart from the calibrator on average, `w` how much they vary around it
(a small w: a framework's own band may be far off what the model says). Both are chosen
on a grid by the beta-binomial marginal likelihood of every framework's bands.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

BANDS = (0.1, 0.25, 0.5)
WEIGHTS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
SCALES = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0)
MIN_FRAMEWORK_ROWS = 20


def bands(
    frameworks: Sequence[str], confidences: Sequence[float], correct: Sequence[bool]
) -> list[tuple[int, int, float]]:
    """(rows, wrong, expected share wrong) of each framework's most confident bands."""
    by: dict[str, list[tuple[float, bool]]] = {}
    for framework, p, ok in zip(frameworks, confidences, correct, strict=True):
        by.setdefault(framework, []).append((p, ok))
    out = []
    for rows in by.values():
        if len(rows) < MIN_FRAMEWORK_ROWS:
            continue
        rows.sort(key=lambda x: -x[0])
        for share in BANDS:
            top = rows[: max(1, math.ceil(share * len(rows)))]
            wrong = sum(not ok for _, ok in top)
            out.append((len(top), wrong, sum(1.0 - p for p, _ in top) / len(top)))
    return out


def _log_beta_binomial(n: int, k: int, a: float, b: float) -> float:
    from scipy.special import betaln, gammaln

    choose = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
    return float(choose + betaln(k + a, n - k + b) - betaln(a, b))


def fit_prior(
    frameworks: Sequence[str], confidences: Sequence[float], correct: Sequence[bool]
) -> tuple[float, float, dict[str, float]]:
    """(weight, scale) of the prior with the highest marginal likelihood, and the
    log-likelihood of each pair on the grid (for the card). With no framework large
    enough: weight 2, scale 1 (the model's own expectation, weakly)."""
    found = bands(frameworks, confidences, correct)
    if not found:
        return 2.0, 1.0, {}
    table: dict[str, float] = {}
    best, best_ll = (2.0, 1.0), -math.inf
    for weight in WEIGHTS:
        for scale in SCALES:
            ll = 0.0
            for n, k, expected in found:
                m = min(0.999, max(1e-6, scale * expected))
                ll += _log_beta_binomial(n, k, weight * m, weight * (1.0 - m))
            table[f"{weight:g}x{scale:g}"] = round(ll, 3)
            if ll > best_ll + 1e-9:
                best, best_ll = (weight, scale), ll
    return best[0], best[1], table
