"""Agreement between reviewers over CRE sets: percent agreement and Krippendorff's alpha.

A unit is one item; its values are the CRE sets its reviewers chose (the empty set: a
reject, "no CRE fits"). alpha = 1 - D_o / D_e, with D_o the disagreement observed within
units and D_e the disagreement expected by chance from every value pooled (Krippendorff,
*Computing Krippendorff's Alpha-Reliability*, 2011). Units with fewer than two values
are not pairable and are left out. Two distances: `exact` (nominal: the same set or not)
and `jaccard` (1 - shared / all CREs of the two, so {a} against {a, b} disagrees by 1/2), the
set-valued distance Passonneau (2006) used for annotations that may hold several labels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

CreSet = frozenset[str]
Distance = Callable[[CreSet, CreSet], float]


def exact(a: CreSet, b: CreSet) -> float:
    return 0.0 if a == b else 1.0


def jaccard(a: CreSet, b: CreSet) -> float:
    union = a | b
    return 1.0 - len(a & b) / len(union) if union else 0.0


def krippendorff_alpha(units: Sequence[Sequence[CreSet]], distance: Distance) -> float | None:
    """Alpha over `units` (each the values its coders gave); None when it is undefined: fewer
    than two pairable values, or no disagreement expected (every value the same)."""
    pairable = [list(u) for u in units if len(u) >= 2]
    values = [v for u in pairable for v in u]
    n = len(values)
    if n < 2:
        return None
    observed = sum(
        2 * sum(distance(a, b) for a, b in combinations(u, 2)) / (len(u) - 1) for u in pairable
    )
    expected = 2 * sum(distance(a, b) for a, b in combinations(values, 2)) / (n - 1)
    if expected == 0:
        return None
    return 1.0 - observed / expected


@dataclass(frozen=True)
class AgreementFigures:
    """What a lead reads for a group of items (a reviewer's, a source's, all)."""

    items: int  # units with two answers or more
    same: int  # units where every answer is the same set
    alpha_exact: float | None
    alpha_jaccard: float | None

    @property
    def percent(self) -> float | None:
        return 100.0 * self.same / self.items if self.items else None


def figures(units: Sequence[Sequence[CreSet]]) -> AgreementFigures:
    pairable = [u for u in units if len(u) >= 2]
    return AgreementFigures(
        items=len(pairable),
        same=sum(1 for u in pairable if len(set(u)) == 1),
        alpha_exact=krippendorff_alpha(pairable, exact),
        alpha_jaccard=krippendorff_alpha(pairable, jaccard),
    )
