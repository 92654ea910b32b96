from __future__ import annotations

from librarian.retrieval.beam import BeamRetriever
from librarian.retrieval.flat import Search, retrieve
from librarian.retrieval.index import build_index
from tests.stubs import StubEmbedder, two_branch_hub


def beam(width: int = 1, gap: float = 0.0) -> tuple[BeamRetriever, StubEmbedder]:
    hub, embedder = two_branch_hub(), StubEmbedder()
    return BeamRetriever(build_index(hub, embedder, None), hub, width, gap), embedder


def test_the_beam_walks_to_the_leaf_the_flat_search_ranks_first() -> None:
    retriever, embedder = beam(width=1)
    query = embedder.encode(["parameterized sql queries"])
    hits = retriever.search(query, Search(5, -1.0))[0]
    flat = retrieve(query, retriever.index, 5, -1.0)[0]
    assert hits[0] == flat[0] and hits[0].cre_id == "100-002"
    # Width 1: one root, then one leaf; the other branch is never visited.
    assert {h.cre_id for h in hits} == {"100-000", "100-002"}


def test_a_near_tie_widens_the_beam() -> None:
    narrow, embedder = beam(width=1, gap=0.0)
    wide, _ = beam(width=1, gap=10.0)  # every top-two gap is "within": width doubles
    query = embedder.encode(["session token"])
    assert len(wide.search(query, Search(10, -1.0))[0]) > len(
        narrow.search(query, Search(10, -1.0))[0]
    )


def test_allowed_ids_keep_the_beam_inside_the_selection() -> None:
    retriever, embedder = beam(width=2)
    query = embedder.encode(["session token"])
    only = frozenset({"500-000", "500-001", "500-002"})
    hits = retriever.search(query, Search(10, -1.0, [only]))[0]
    assert hits and {h.cre_id for h in hits} <= only


def test_results_are_deterministic_and_scored_like_the_flat_search() -> None:
    retriever, embedder = beam(width=2)
    queries = embedder.encode(["rotate session token", "security policy review"])
    first = retriever.search(queries, Search(10, -1.0))
    assert first == retriever.search(queries, Search(10, -1.0))
    flat = {h.cre_id: h.score for h in retrieve(queries[:1], retriever.index, 10, -1.0)[0]}
    for hit in first[0]:
        assert abs(hit.score - flat[hit.cre_id]) < 1e-6
