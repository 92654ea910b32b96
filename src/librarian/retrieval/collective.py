"""Linking a source as a whole (the pipeline's C.5): its items choose their CREs jointly.

A standard's sections rarely share a CRE, and a source links at its own depth in the hub.
So each item (one section of the source, however many rows carry it) picks one of its
top-k candidates to maximise the source's total score, where

- a CRE's second and later uses within the source cost `reuse_penalty` (lambda) each
  (CREs the source already links in the store count as used), and
- an inner (non-leaf) node costs `inner_penalty`.

Both are the source's own priors, read off its shape without labels (`PriorRule`).
Solved exactly and sparsely: an item either takes a CRE's one free slot, or falls back to
its best candidate at cost lambda; the gain of a free slot over the fallback is
`lambda - (best - value)`, so only candidates within lambda of an item's best are edges,
and a maximum-weight matching between CREs and items (scipy's LAPJVsp over the candidate
lists, never an items x hub matrix) decides the free slots. Deterministic: the same
claims in the same order give the same choices. Research numbers: docs/quality.md.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

# A source's shape says nothing until it has this many items: below it, no priors.
MIN_SHAPE_ITEMS = 8
# A rival's claim margin is clipped to this (no rival at all: the cap).
MARGIN_CAP = 0.2


@dataclass(frozen=True)
class Claim:
    """One item's candidates, best first by retrieval: CRE ids and their scores."""

    ids: tuple[str, ...]
    scores: tuple[float, ...]


@dataclass(frozen=True)
class SourcePriors:
    """How one source links: its reuse penalty and inner-node penalty, and the shape they
    were read from (the share of distinct top-1 candidates, the share that are leaves)."""

    reuse_penalty: float
    inner_penalty: float
    distinct_share: float
    leaf_share: float
    items: int
    read_from: str = "candidates"  # or "decisions": the CREs people chose

    def describe(self) -> str:
        """What the source's shape makes the joint choice do, in a reviewer's words (the
        numbers are in the summary's JSON: `reuse_penalty`, `inner_penalty`, ...)."""
        read = (
            "the CREs its reviewers chose" if self.read_from == "decisions" else "its first choices"
        )
        distinct = f"{self.distinct_share:.0%} of {read} are distinct"
        if self.reuse_penalty:
            reuse = f"this standard rarely links two sections to one CRE ({distinct}), so a "
            reuse += "CRE's second use is discouraged"
        else:
            reuse = f"its sections may share a CRE ({distinct})"
        if not self.inner_penalty:
            return f"{self.items} items linked together: {reuse}"
        inner = f"and a broad parent CRE is discouraged ({self.leaf_share:.0%} are specific ones)"
        return f"{self.items} items linked together: {reuse}, {inner}"


@dataclass(frozen=True)
class PriorRule:
    """The label-free rule from a source's shape to its priors (learnt by `train`):
    lambda when its top-1 candidates are mostly distinct, an inner-node penalty when they
    are mostly leaves; none below MIN_SHAPE_ITEMS items."""

    min_distinct: float
    reuse_penalty: float
    min_leaf: float
    inner_penalty: float

    def priors(self, claims: Sequence[Claim], is_leaf: Mapping[str, bool]) -> SourcePriors:
        distinct, leaf = source_shape(claims, is_leaf)
        if len(claims) < MIN_SHAPE_ITEMS:
            return SourcePriors(0.0, 0.0, distinct, leaf, len(claims))
        return SourcePriors(
            self.reuse_penalty if distinct >= self.min_distinct else 0.0,
            self.inner_penalty if leaf >= self.min_leaf else 0.0,
            distinct,
            leaf,
            len(claims),
        )

    def as_json(self) -> dict[str, float]:
        return {
            "min_distinct": self.min_distinct,
            "reuse_penalty": self.reuse_penalty,
            "min_leaf": self.min_leaf,
            "inner_penalty": self.inner_penalty,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> PriorRule:
        values = {k: float(str(data[k])) for k in ("min_distinct", "reuse_penalty", "min_leaf")}
        rule = cls(**values, inner_penalty=float(str(data["inner_penalty"])))
        if not all(0.0 <= v <= 1.0 and math.isfinite(v) for v in rule.as_json().values()):
            raise ValueError(f"prior rule values must lie in [0, 1]: {rule.as_json()}")
        return rule


NO_RULE = PriorRule(1.0, 0.0, 1.0, 0.0)


def source_shape(claims: Sequence[Claim], is_leaf: Mapping[str, bool]) -> tuple[float, float]:
    """The share of distinct top-1 candidates among the items, and the share of items
    whose top-1 candidate is a leaf of the hub (1.0, 1.0 for no items)."""
    tops = [c.ids[0] for c in claims if c.ids]
    if not tops:
        return 1.0, 1.0
    return len(set(tops)) / len(tops), sum(is_leaf.get(t, True) for t in tops) / len(tops)


def _values(claim: Claim, inner_penalty: float, is_leaf: Mapping[str, bool]) -> np.ndarray:
    scores = np.asarray(claim.scores, dtype=np.float64)
    if inner_penalty:
        inner = np.asarray([not is_leaf.get(c, True) for c in claim.ids], dtype=np.float64)
        scores = scores - inner_penalty * inner
    return scores


def assign(
    claims: Sequence[Claim],
    priors: SourcePriors,
    is_leaf: Mapping[str, bool],
    used: Collection[str] = (),
    own: Sequence[Collection[str]] | None = None,
) -> list[int]:
    """Each item's chosen candidate (an index into its `ids`; -1 for an item with none)
    under the source's priors. `used`: CREs the source already links (no free slot);
    `own`: per item, the used CREs that are its own earlier version's (free for it)."""
    values = [_values(c, priors.inner_penalty, is_leaf) for c in claims]
    chosen = [int(np.argmax(v)) if v.size else -1 for v in values]  # first best: stable
    lam = priors.reuse_penalty
    if lam <= 0.0:
        return chosen
    column: dict[str, int] = {}
    rows, cols, gains = [], [], []
    for item, (claim, value) in enumerate(zip(claims, values, strict=True)):
        if not value.size:
            continue
        best = float(value.max())
        for j, cre in enumerate(claim.ids):
            gain = lam - (best - float(value[j]))
            if gain > 0.0 and (cre not in used or (own is not None and cre in own[item])):
                rows.append(column.setdefault(cre, len(column)))
                cols.append(item)
                gains.append(gain)
    if not column:
        return chosen
    matched = _match(rows, cols, gains, len(column), len(claims), lam)
    slot_of = {cre: row for row, cre in enumerate(column)}
    for item, claim in enumerate(claims):
        row = matched.get(item)
        if row is not None:
            chosen[item] = next(j for j, c in enumerate(claim.ids) if slot_of.get(c) == row)
    return chosen


def _match(
    rows: list[int], cols: list[int], gains: list[float], cres: int, items: int, lam: float
) -> dict[int, int]:
    """Maximum-weight matching of CRE free slots to items: {item: CRE row}. Each CRE also
    has a dummy column (its slot left free); costs are shifted positive because the
    sparse solver reads a zero as no edge."""
    # Imported here: scipy.sparse costs ~0.3 s, and a command that never links a source
    # as a whole (hub search, the workbench's pages) should not pay it.
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    shift = lam + 1.0
    dummy_rows = list(range(cres))
    dummy_cols = [items + r for r in range(cres)]
    costs = [shift - g for g in gains] + [shift] * cres
    graph = csr_array((costs, (rows + dummy_rows, cols + dummy_cols)), shape=(cres, items + cres))
    row_ind, col_ind = min_weight_full_bipartite_matching(graph)
    return {int(c): int(r) for r, c in zip(row_ind, col_ind, strict=True) if c < items}


@dataclass(frozen=True)
class Rivalry:
    """What the rest of the source says of one candidate of one item."""

    was_top: bool  # it was the item's own retrieval top-1
    claimants: int  # other items of the source whose top-1 it is
    claim_margin: float  # the item's score on it minus the best other item's


@dataclass(frozen=True)
class Collective:
    """Linking the source as a whole, for one item: the candidate chosen (an index into
    its claim; -1: none), each candidate's rivalry, and the source's priors."""

    chosen: int
    rivalry: Mapping[str, Rivalry]
    priors: SourcePriors
    chosen_id: str | None = None  # the CRE chosen (None: none)

    @property
    def kept_top(self) -> bool:
        return self.chosen == 0


def collective_evidence(
    claims: Sequence[Claim], chosen: Sequence[int], priors: SourcePriors
) -> list[Collective]:
    """Each item's collective evidence, from the claims and the choices."""
    tops: dict[str, int] = {}
    best: dict[str, list[tuple[float, int]]] = {}  # per CRE: its two best (score, item)
    for item, claim in enumerate(claims):
        if claim.ids:
            tops[claim.ids[0]] = tops.get(claim.ids[0], 0) + 1
        for cre, score in zip(claim.ids, claim.scores, strict=True):
            two = best.setdefault(cre, [])
            if len(two) < 2 or score > two[1][0]:  # ties: the earlier item stays
                two.append((score, item))
                if len(two) == 2 and two[1][0] > two[0][0]:
                    two.reverse()
                elif len(two) == 3:
                    two.sort(key=lambda x: (-x[0], x[1]))
                    del two[2:]
    out: list[Collective] = []
    for item, (claim, j) in enumerate(zip(claims, chosen, strict=True)):
        rivalry: dict[str, Rivalry] = {}
        for k, (cre, score) in enumerate(zip(claim.ids, claim.scores, strict=True)):
            rival = next((v for v, other in best[cre] if other != item), None)
            margin = score - rival if rival is not None else MARGIN_CAP
            claimants = tops.get(cre, 0) - (1 if k == 0 else 0)
            clipped = max(-MARGIN_CAP, min(MARGIN_CAP, margin))
            rivalry[cre] = Rivalry(k == 0, claimants, clipped)
        out.append(Collective(j, rivalry, priors, claim.ids[j] if j >= 0 else None))
    return out
