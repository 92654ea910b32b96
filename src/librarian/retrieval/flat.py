"""Stage 3: candidate retrieval by cosine over the hub index (`index.py`).

A hub's dense score is the mean of its cosines to the section for three texts: its name,
its hierarchy path, and its name followed by its children's names. A `bonus` (one value
per query and hub, aligned with the index) is added to it: the evidence of the sections
already linked to the hub (`evidence.py`). Measurements behind both: docs/quality.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray

from librarian.errors import RunError
from librarian.models.seams import Vectors
from librarian.retrieval.index import HubIndex


class DimensionMismatchError(RunError):
    """Query vectors and the hub index come from models of different width."""


@dataclass(frozen=True)
class ScoredHub:
    cre_id: str
    score: float  # what ranks it: dense + bonus
    dense: float | None = None  # the dense score alone, when a bonus was added

    @property
    def dense_score(self) -> float:
        return self.score if self.dense is None else self.dense


# Per query row, an additive score per hub (aligned with the hub index); None: nothing.
Bonus = NDArray[np.float32] | None


# Per query row, the only CRE ids it may return (None: all); None for the whole batch: all.
Allowed = Sequence[frozenset[str] | None] | None
# Per query row, the hubs found, best first.
Hits = list[list[ScoredHub]]


def check_dimension(queries: Vectors, index: HubIndex) -> None:
    if queries.ndim != 2 or queries.shape[1] != index.dimension:
        raise DimensionMismatchError(
            f"query vectors have dimension {queries.shape[-1]}, "
            f"the hub index has {index.dimension}: were they built by the same model?"
        )


class Search(NamedTuple):
    """What a search asks: the top k hubs scoring at least `min_score`; `allowed[i]`: the
    only CRE ids query row i may return (None: all); `bonus[i]` is added to row i's dense
    scores before ranking."""

    top_k: int
    min_score: float = 0.0
    allowed: Allowed = None
    bonus: Bonus = None


class Retriever(Protocol):
    """Top-k hubs for query vectors: in memory, or in a vector database."""

    @property
    def name(self) -> str: ...

    def search(self, queries: Vectors, search: Search) -> Hits: ...


@dataclass(frozen=True)
class MemoryRetriever:
    index: HubIndex
    name: str = "in-memory"

    def search(self, queries: Vectors, search: Search) -> Hits:
        return retrieve(queries, self.index, *search)


def combined_vectors(index: HubIndex) -> Vectors:
    """One vector a hub whose dot product with a query is the hub's retrieval score.

    Queries and hub texts are unit vectors, so the mean of three cosines is the dot
    product with the mean of the three vectors: one inner-product search serves all three.
    """
    total = index.name_vectors + index.path_vectors + index.children_vectors
    return np.asarray(total / 3.0, dtype=np.float32)


def retrieve(
    queries: Vectors,
    index: HubIndex,
    top_k: int,
    min_score: float = 0.0,
    allowed: Allowed = None,
    bonus: Bonus = None,
) -> Hits:
    """Top-k hubs per query row, best first; hubs scoring at or below `min_score` are dropped."""
    check_dimension(queries, index)
    dense = queries @ combined_vectors(index).T
    scores = dense if bonus is None else dense + bonus
    if allowed is not None:
        for i, ids in enumerate(allowed):
            if ids is not None:
                scores[i, [j for j, c in enumerate(index.ids) if c not in ids]] = -np.inf
    return [
        top_hits(row, index.ids, top_k, min_score, None if bonus is None else dense[i])
        for i, row in enumerate(scores)
    ]


def top_hits(
    scores: NDArray[np.float32],
    ids: Sequence[str],
    top_k: int,
    min_score: float,
    dense: NDArray[np.float32] | None = None,
) -> list[ScoredHub]:
    """The `top_k` best of one row of scores, ties broken by id so the order never varies."""
    k = min(top_k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    # The k scores as Python floats once (float32 to float is exact either way).
    score = dict(zip(top.tolist(), scores[top].tolist(), strict=True))
    near = dict(zip(top.tolist(), dense[top].tolist(), strict=True)) if dense is not None else {}
    ranked = sorted(score, key=lambda j: (-score[j], ids[j]))
    return [
        ScoredHub(ids[j], score[j], near.get(j))
        for j in ranked
        if score[j] > min_score and math.isfinite(score[j])
    ]
