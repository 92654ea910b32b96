"""An Embedder that remembers: vectors by content hash, so unchanged text costs nothing.

The vectors live in a SQLite file beside the hub cache. Several runs (or Dask workers on
one machine) may share it: WAL mode, a busy timeout, and `INSERT OR IGNORE` (equal keys
hold equal vectors). A damaged or locked cache is never fatal: the vector is computed
again."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from librarian.models.seams import MAX_MODEL_CHARS, Embedder, VectorCache, Vectors


class CachingEmbedder:
    """An Embedder that asks `cache` first, by the content hash of each text under this
    model: a re-run over unchanged sections does no model work."""

    def __init__(self, inner: Embedder, cache: VectorCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.fingerprint = inner.fingerprint
        self.dimension = inner.dimension
        self.hits = 0
        self.misses = 0

    def key(self, text: str) -> str:
        material = f"{self.fingerprint}\x00{text[:MAX_MODEL_CHARS]}"
        return hashlib.sha256(material.encode("utf-8")).hexdigest()

    def encode(self, texts: Sequence[str]) -> Vectors:
        keys = [self.key(t) for t in texts]
        found = self.cache.get(sorted(set(keys)))
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        if missing:
            first_text = {k: t for k, t in zip(keys, texts, strict=True)}
            fresh = self.inner.encode([first_text[k] for k in missing])
            computed = dict(zip(missing, fresh, strict=True))
            self.cache.put(computed)
            found = {**found, **computed}
        self.hits += sum(1 for k in keys if k not in missing)
        self.misses += len(missing)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, k in enumerate(keys):
            out[row] = found[k]
        return out

    def truncated(self, texts: Sequence[str]) -> list[int]:
        return self.inner.truncated(texts)


_CHUNK = 500  # keys per SELECT: SQLite caps the number of bound parameters


class SqliteVectorCache:
    def __init__(self, path: Path, dimension: int) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.dimension = dimension
        self._db = sqlite3.connect(path, timeout=10, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, v BLOB)")
        self._db.commit()

    def get(self, keys: Sequence[str]) -> dict[str, NDArray[np.float32]]:
        found: dict[str, NDArray[np.float32]] = {}
        try:
            for start in range(0, len(keys), _CHUNK):
                part = list(keys[start : start + _CHUNK])
                marks = ",".join("?" * len(part))
                for key, blob in self._db.execute(
                    f"SELECT key, v FROM vectors WHERE key IN ({marks})", part
                ):
                    vector = np.frombuffer(blob, dtype=np.float32)
                    if vector.shape == (self.dimension,):
                        found[key] = vector
        except sqlite3.Error:
            return {}  # a cache that cannot be read is a cache miss
        return found

    def put(self, items: dict[str, NDArray[np.float32]]) -> None:
        rows = [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()]
        try:
            self._db.executemany("INSERT OR IGNORE INTO vectors (key, v) VALUES (?, ?)", rows)
            self._db.commit()
        except sqlite3.Error:
            self._db.rollback()  # not cached this time; nothing else depends on it
