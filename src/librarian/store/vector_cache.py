"""Query vectors by content hash in a SQLite file beside the hub cache.

Several runs (or Dask workers on one machine) may share it: WAL mode, a busy timeout,
and `INSERT OR IGNORE` (equal keys hold equal vectors). A damaged or locked cache is
never fatal: the vector is computed again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

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
