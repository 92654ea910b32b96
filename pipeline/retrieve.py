"""Stage 3: candidate retrieval by cosine over hub embeddings.

A hub scores by the mean of its cosines to the section for three texts: its name, its
hierarchy path, and its name followed by its children's names. Name and path are the
zero-shot baseline (their mean beats either alone); the children's names raised
recall@20 on leave-one-framework-out dev by 3 points (McNemar p < 0.01) and top-1 by
0.8-1.6 points, nist_ssdf included (docs/quality.md). Hub vectors are computed once per
(model, hub content) and cached on disk as npz.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from pipeline.hub import Hub
from pipeline.models import Embedder, Vectors


class DimensionMismatchError(ValueError):
    """Query vectors and the hub index come from models of different width."""


@dataclass(frozen=True)
class ScoredHub:
    cre_id: str
    score: float


@dataclass(frozen=True)
class HubIndex:
    ids: tuple[str, ...]
    name_vectors: Vectors
    path_vectors: Vectors
    children_vectors: Vectors
    model_fingerprint: str
    hub_hash: str

    @property
    def dimension(self) -> int:
        return int(self.name_vectors.shape[1])


RETRIEVER_ID = "dense cosine mean(name, path, name+children)"
_CACHE_VERSION = "v2"


def cache_file(cache_dir: Path, embedder: Embedder, hub: Hub) -> Path:
    return (
        cache_dir / f"hub-{_CACHE_VERSION}-{embedder.fingerprint[:16]}-{hub.content_hash[:16]}.npz"
    )


def build_index(hub: Hub, embedder: Embedder, cache_dir: Path | None) -> HubIndex:
    """Load the hub index from the cache, or embed the hub and cache it."""
    path = cache_file(cache_dir, embedder, hub) if cache_dir else None
    if path is not None and path.is_file():
        cached = _load(path, hub, embedder)
        if cached is not None:
            return cached
    index = HubIndex(
        ids=hub.ids,
        name_vectors=embedder.encode(hub.name_texts()),
        path_vectors=embedder.encode(hub.path_texts()),
        children_vectors=embedder.encode(hub.children_texts()),
        model_fingerprint=embedder.fingerprint,
        hub_hash=hub.content_hash,
    )
    if path is not None:
        _save(path, index)
    return index


def _load(path: Path, hub: Hub, embedder: Embedder) -> HubIndex | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            ids = tuple(str(i) for i in data["ids"])
            names = data["name_vectors"].astype(np.float32)
            paths = data["path_vectors"].astype(np.float32)
            children = data["children_vectors"].astype(np.float32)
    except (OSError, KeyError, ValueError):
        return None  # a damaged cache is rebuilt, not trusted
    shape = (len(ids), embedder.dimension)
    if ids != hub.ids or not names.shape == paths.shape == children.shape == shape:
        return None
    return HubIndex(ids, names, paths, children, embedder.fingerprint, hub.content_hash)


def _save(path: Path, index: HubIndex) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz.part")
    with os.fdopen(fd, "wb") as handle:
        np.savez(
            handle,
            ids=np.array(index.ids),
            name_vectors=index.name_vectors,
            path_vectors=index.path_vectors,
            children_vectors=index.children_vectors,
        )
    os.replace(tmp, path)


# Per query row, the only CRE ids it may return (None: all); None for the whole batch: all.
Allowed = Sequence[frozenset[str] | None] | None


class Retriever(Protocol):
    """Top-k hubs for query vectors: in memory, or in a vector database."""

    name: str

    def search(
        self,
        queries: Vectors,
        top_k: int,
        min_score: float,
        allowed: Allowed = None,
    ) -> list[list[ScoredHub]]:
        """`allowed[i]`: the only CRE ids row i may return (None: all)."""
        ...


@dataclass(frozen=True)
class MemoryRetriever:
    index: HubIndex
    name: str = "in-memory"

    def search(
        self,
        queries: Vectors,
        top_k: int,
        min_score: float,
        allowed: Allowed = None,
    ) -> list[list[ScoredHub]]:
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
) -> list[list[ScoredHub]]:
    """Top-k hubs per query row, best first; hubs scoring at or below `min_score` are dropped."""
    if queries.ndim != 2 or queries.shape[1] != index.dimension:
        raise DimensionMismatchError(
            f"query vectors have dimension {queries.shape[-1]}, "
            f"the hub index has {index.dimension}: were they built by the same model?"
        )
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
