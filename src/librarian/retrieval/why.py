"""Why a hub scored what it did, in words a reviewer reads: the evidence per candidate."""

from __future__ import annotations

from librarian.models.seams import Vectors
from librarian.retrieval.evidence import EvidenceIndex
from librarian.retrieval.index import HubIndex


def why(query: Vectors, index: HubIndex, evidence: EvidenceIndex | None, row: int) -> str:
    """'name 0.61, path 0.58, children 0.55; best linked section 0.72: nist_800_53 AC-2
    (prose)' for the hub at `row` of the index, given one query vector."""
    parts = [
        f"name {float(index.name_vectors[row] @ query):.2f}",
        f"path {float(index.path_vectors[row] @ query):.2f}",
        f"children {float(index.children_vectors[row] @ query):.2f}",
    ]
    said = ", ".join(parts)
    if evidence is None:
        return said
    best = evidence.best_exemplar(query, row)
    if best is None:
        return f"{said}; no linked section describes it"
    label, cosine = best
    return f"{said}; best linked section {cosine:.2f}: {label}"
