"""A second candidate generator: beam search down the hub tree (root -> group -> leaf).

The tree is the hubs' hierarchy paths (OpenCRE's branches, or a flat catalogue's
navigation groups). At each level the children of the nodes kept so far are scored by
the query's cosine to their subtree's centroid; the best `width` are kept, twice as many
when the top two lie within `gap` of each other. Ties break on (-score, path), so a
query always takes the same route. Every hub the beam passes through is a candidate,
scored as the flat retriever scores it (retrieve.combined_vectors), so the calibrator
reads the same scale.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from librarian.catalogue.hub import Hub
from librarian.models.seams import Vectors
from librarian.retrieval.flat import (
    Hits,
    Search,
    check_dimension,
    combined_vectors,
    top_hits,
)
from librarian.retrieval.index import HubIndex

Path = tuple[str, ...]


@dataclass
class _TreeNode:
    rows: list[int] = field(default_factory=list)  # hubs in the subtree (index rows)
    own: int | None = None  # the hub at this node, if any (groups have none)
    children: list[Path] = field(default_factory=list)


class BeamRetriever:
    def __init__(self, index: HubIndex, hub: Hub, width: int = 4, gap: float = 0.02) -> None:
        if width < 1:
            raise ValueError("beam width must be at least 1")
        self.index = index
        self.width = width
        self.gap = gap
        self.name = f"beam search down the hub tree (width {width}, x2 when top two < {gap})"
        self._hub_vectors = combined_vectors(index)
        tree: dict[Path, _TreeNode] = {(): _TreeNode()}
        for row, cre_id in enumerate(index.ids):
            path = tuple(hub.by_id[cre_id].hierarchy_path)
            for depth in range(len(path) + 1):
                prefix = path[:depth]
                if prefix not in tree:
                    tree[prefix] = _TreeNode()
                    tree[prefix[:-1]].children.append(prefix)
                tree[prefix].rows.append(row)
            tree[path].own = row
        for node in tree.values():
            node.children.sort()
        self._tree = tree
        keys = list(tree)
        self._key_row = {k: i for i, k in enumerate(keys)}
        centroids = np.stack([self._hub_vectors[tree[k].rows].mean(axis=0) for k in keys])
        norms = np.linalg.norm(centroids, axis=1, keepdims=True)
        self._centroids = (centroids / np.maximum(norms, 1e-12)).astype(np.float32)

    def search(self, queries: Vectors, search: Search) -> Hits:
        top_k, min_score, allowed, bonus = search
        check_dimension(queries, self.index)
        node_scores = queries @ self._centroids.T
        dense = queries @ self._hub_vectors.T
        scores = dense if bonus is None else dense + bonus
        results = []
        for q in range(len(queries)):
            only = allowed[q] if allowed is not None else None
            visited = sorted(self._walk(node_scores[q], only))
            row = np.full(len(self.index.ids), -np.inf, dtype=np.float32)
            row[visited] = scores[q, visited]
            plain = None if bonus is None else dense[q]
            results.append(top_hits(row, self.index.ids, top_k, min_score, plain))
        return results

    def _walk(self, scores: np.ndarray, only: frozenset[str] | None) -> set[int]:
        ids = self.index.ids

        def open_to(key: Path) -> bool:
            return only is None or any(ids[j] in only for j in self._tree[key].rows)

        found: set[int] = set()
        frontier: list[Path] = [()]
        while frontier:
            children = [c for f in frontier for c in self._tree[f].children if open_to(c)]
            if not children:
                break
            ranked = sorted(children, key=lambda c: (-float(scores[self._key_row[c]]), c))
            width = self.width
            if len(ranked) > 1:
                top, second = (float(scores[self._key_row[c]]) for c in ranked[:2])
                if top - second < self.gap:
                    width *= 2
            frontier = ranked[:width]
            for key in frontier:
                own = self._tree[key].own
                if own is not None and (only is None or ids[own] in only):
                    found.add(own)
        return found
