"""Why a hub scored what it did, in words a reviewer reads: the evidence per candidate."""

from __future__ import annotations

from librarian.models.seams import Vectors
from librarian.retrieval.evidence import EvidenceIndex
from librarian.retrieval.index import HubIndex

SCALE = "similarity to this text, 0-1"  # cosines of unit vectors; never below 0 in practice
EXEMPLAR_SAID = "closest section already linked to it"


def why(query: Vectors, index: HubIndex, evidence: EvidenceIndex | None, row: int) -> str:
    """In words a reviewer reads, each number a cosine on the stated scale: 'similarity to
    this text, 0-1: its name 0.61, its place in the hub 0.58, its sub-topics 0.55; closest
    section already linked to it 0.72: nist_800_53 AC-2 (prose)' for the hub at `row` of
    the index, given one query vector."""
    parts = [
        f"its name {float(index.name_vectors[row] @ query):.2f}",
        f"its place in the hub {float(index.path_vectors[row] @ query):.2f}",
        f"its sub-topics {float(index.children_vectors[row] @ query):.2f}",
    ]
    said = f"{SCALE}: " + ", ".join(parts)
    if evidence is None:
        return said
    best = evidence.best_exemplar(query, row)
    if best is None:
        return f"{said}; no section linked to it yet"
    label, cosine = best
    return f"{said}; {EXEMPLAR_SAID} {cosine:.2f}: {label}"
