"""Stage 3: candidate retrieval by cosine over the hub index (`index.py`).

A hub scores by the mean of its cosines to the section for three texts: its name, its
hierarchy path, and its name followed by its children's names. Name and path are the
zero-shot baseline (their mean beats either alone); the children's names raised
recall@20 on leave-one-framework-out dev by 3 points (McNemar p < 0.01) and top-1 by
0.8-1.6 points, nist_ssdf included (docs/quality.md). Hub vectors are computed once per
(model, hub content) and cached on disk as npz.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from librarian.errors import RunError
from librarian.models.seams import Vectors
from librarian.retrieval.index import HubIndex


class DimensionMismatchError(RunError):
    """Query vectors and the hub index come from models of different width."""


@dataclass(frozen=True)
class ScoredHub:
    cre_id: str
    score: float


RETRIEVER_ID = "dense cosine mean(name, path, name+children)"


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


class Retriever(Protocol):
    """Top-k hubs for query vectors: in memory, or in a vector database."""

    name: str

    def search(
        self, queries: Vectors, top_k: int, min_score: float, allowed: Allowed = None
    ) -> Hits:
        """`allowed[i]`: the only CRE ids row i may return (None: all)."""
        ...


@dataclass(frozen=True)
class MemoryRetriever:
    index: HubIndex
    name: str = "in-memory"

    def search(
        self, queries: Vectors, top_k: int, min_score: float, allowed: Allowed = None
    ) -> Hits:
        return retrieve(queries, self.index, top_k, min_score, allowed)


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
) -> Hits:
    """Top-k hubs per query row, best first; hubs scoring at or below `min_score` are dropped."""
    check_dimension(queries, index)
    scores = queries @ combined_vectors(index).T
    if allowed is not None:
        for i, ids in enumerate(allowed):
            if ids is not None:
                scores[i, [j for j, c in enumerate(index.ids) if c not in ids]] = -np.inf
    k = min(top_k, scores.shape[1])
    results: list[list[ScoredHub]] = []
    for row in scores:
        top = np.argpartition(-row, k - 1)[:k]
        # Sort by (-score, id) so equal scores come out in one deterministic order.
        ranked = sorted(top.tolist(), key=lambda j: (-float(row[j]), index.ids[j]))
        results.append(
            [
                ScoredHub(index.ids[j], float(row[j]))
                for j in ranked
                if float(row[j]) > min_score and np.isfinite(row[j])
            ]
        )
    return results
