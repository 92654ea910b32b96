"""Section vectors by content hash: a re-run of unchanged text does no model work."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from librarian.models.cache import CachingEmbedder, SqliteVectorCache
from tests.stubs import StubEmbedder


class DictCache:
    def __init__(self) -> None:
        self.data: dict[str, NDArray[np.float32]] = {}

    def get(self, keys: Sequence[str]) -> dict[str, NDArray[np.float32]]:
        return {k: self.data[k] for k in keys if k in self.data}

    def put(self, items: dict[str, NDArray[np.float32]]) -> None:
        self.data.update(items)


def test_second_pass_is_served_from_the_cache() -> None:
    inner = StubEmbedder(64)
    embedder = CachingEmbedder(inner, DictCache())
    texts = ["rotate session token", "sql injection", "rotate session token"]
    first = embedder.encode(texts)
    assert inner.calls == 1 and embedder.misses == 2  # the repeated text is embedded once
    again = embedder.encode(list(reversed(texts)))
    assert inner.calls == 1 and embedder.hits == 3
    np.testing.assert_array_equal(again, first[::-1])
    np.testing.assert_array_equal(first, inner.encode(texts))


def test_sqlite_cache_round_trip_and_sharing(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite"
    one, two = SqliteVectorCache(path, 4), SqliteVectorCache(path, 4)
    vector = np.arange(4, dtype=np.float32)
    one.put({"a": vector})
    one.put({"a": vector + 1})  # equal keys hold equal vectors: the first stays
    np.testing.assert_array_equal(two.get(["a", "b"])["a"], vector)
    assert SqliteVectorCache(path, 8).get(["a"]) == {}  # another width is a miss


def test_an_unreadable_cache_is_a_miss_not_a_failure(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite"
    cache = SqliteVectorCache(path, 4)
    cache._db.execute("DROP TABLE vectors")
    assert cache.get(["a"]) == {}
    cache.put({"a": np.zeros(4, dtype=np.float32)})  # swallowed, logged by nobody: a miss
    embedder = CachingEmbedder(StubEmbedder(4), cache)
    assert embedder.encode(["x"]).shape == (1, 4)
