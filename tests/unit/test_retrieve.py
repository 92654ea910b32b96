from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from librarian.catalogue.hub import build_hub
from librarian.retrieval.flat import DimensionMismatchError, retrieve
from librarian.retrieval.index import build_index, cache_file
from tests.stubs import StubEmbedder, node, small_hub


def test_topk_is_ordered_and_finds_the_obvious_hub() -> None:
    hub, emb = small_hub(), StubEmbedder()
    index = build_index(hub, emb, None)
    hits = retrieve(emb.encode(["parameterized queries against SQL injection"]), index, top_k=3)
    assert len(hits[0]) == 3
    assert hits[0][0].cre_id == "300-001"
    scores = [h.score for h in hits[0]]
    assert scores == sorted(scores, reverse=True)


def test_ties_break_by_id() -> None:
    root = ["Root"]
    hub = build_hub(
        [
            node("100-000", "Root", None, root, False),
            node("300-000", "same words", "100-000", [*root, "same words"], True),
            node("200-000", "same words", "100-000", [*root, "same words"], True),
        ]
    )
    emb = StubEmbedder()
    hits = retrieve(emb.encode(["same words"]), build_index(hub, emb, None), top_k=2)
    assert [h.cre_id for h in hits[0]] == ["200-000", "300-000"]


def test_dimension_mismatch_fails_loudly() -> None:
    hub = small_hub()
    index = build_index(hub, StubEmbedder(64), None)
    with pytest.raises(DimensionMismatchError, match="dimension 32"):
        retrieve(StubEmbedder(32).encode(["x"]), index, top_k=3)


def test_min_score_can_leave_no_candidates() -> None:
    hub, emb = small_hub(), StubEmbedder()
    index = build_index(hub, emb, None)
    assert retrieve(emb.encode(["zzzz qqqq"]), index, top_k=3) == [[]]


def test_hub_vectors_are_cached_by_model_and_hub(tmp_path: Path) -> None:
    hub, emb = small_hub(), StubEmbedder()
    first = build_index(hub, emb, tmp_path)
    assert cache_file(tmp_path, emb, hub).is_file()
    calls = emb.calls
    second = build_index(hub, emb, tmp_path)
    assert emb.calls == calls  # served from the cache: no model work
    np.testing.assert_array_equal(first.name_vectors, second.name_vectors)
    other = build_hub([*hub.nodes[:-1]])
    assert cache_file(tmp_path, emb, other) != cache_file(tmp_path, emb, hub)


def test_damaged_cache_is_rebuilt(tmp_path: Path) -> None:
    hub, emb = small_hub(), StubEmbedder()
    path = cache_file(tmp_path, emb, hub)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not an npz")
    index = build_index(hub, emb, tmp_path)
    assert index.name_vectors.shape == (len(hub.nodes), emb.dimension)
