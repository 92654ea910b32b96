"""Where a window's batches wait between the runner's passes, so that memory is bounded by
the batch, not the file (docs/benchmarks.md has the measured slope).

`MemorySpill` keeps them (one call's sections: `Pipeline.link`, eval, explain); `DiskSpill`
writes them to a private temporary SQLite file a run removes when it ends. What is spilled
is this run's own objects, serialised with pickle: the file is created with mkstemp (mode
0600) in a directory mkdtemp made, read back only by the process that wrote it, and
deleted with it, so nothing another party wrote is ever unpickled. No model, cache or
output is stored this way (they are safetensors, npz and JSON).
"""

from __future__ import annotations

import pickle
import shutil
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator, MutableMapping
from pathlib import Path
from typing import Any, Protocol

Key = tuple[int, int, int]  # (batch, part, row)


class Spill(Protocol):
    """Values by kind and (batch, part, row); a part's values are taken back once, in row
    order."""

    def put(self, kind: str, values: Iterable[tuple[Key, Any]]) -> None: ...

    def take(self, kind: str, batch: int, part: int) -> list[Any]: ...

    def close(self) -> None: ...


class MemorySpill:
    def __init__(self) -> None:
        self._values: dict[tuple[str, int, int], dict[int, Any]] = {}

    def put(self, kind: str, values: Iterable[tuple[Key, Any]]) -> None:
        for (batch, part, row), value in values:
            self._values.setdefault((kind, batch, part), {})[row] = value

    def take(self, kind: str, batch: int, part: int) -> list[Any]:
        return [value for _, value in self.take_rows(kind, batch, part)]

    def take_rows(self, kind: str, batch: int, part: int) -> list[tuple[int, Any]]:
        rows = self._values.pop((kind, batch, part), {})
        return sorted(rows.items(), key=_first)

    def close(self) -> None:
        self._values.clear()


class DiskSpill:
    """The values of the first `keep` batches stay in memory (a file of up to ~2,000 rows
    at the default batch size never touches the disk: pickling costs ~0.5 ms a row); the
    rest go to the file."""

    def __init__(self, under: Path | None = None, keep: int = 8) -> None:
        self._memory, self._keep = MemorySpill(), keep
        self._dir = Path(tempfile.mkdtemp(prefix="librarian-spill-", dir=under))
        self._db = sqlite3.connect(self._dir / "spill.sqlite", check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute(
            "CREATE TABLE spill (kind TEXT, batch INTEGER, part INTEGER, row INTEGER, "
            "value BLOB, PRIMARY KEY (kind, batch, part, row))"
        )

    def put(self, kind: str, values: Iterable[tuple[Key, Any]]) -> None:
        values = list(values)
        self._memory.put(kind, [(key, v) for key, v in values if key[0] < self._keep])
        self._db.executemany(
            "INSERT INTO spill VALUES (?, ?, ?, ?, ?)",
            (
                (kind, *key, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
                for key, value in values
                if key[0] >= self._keep
            ),
        )

    def take(self, kind: str, batch: int, part: int) -> list[Any]:
        where = "WHERE kind = ? AND batch = ? AND part = ?"
        blobs = self._db.execute(
            f"SELECT row, value FROM spill {where}", (kind, batch, part)
        ).fetchall()
        self._db.execute(f"DELETE FROM spill {where}", (kind, batch, part))
        # This process wrote them (the module docstring): nothing else is unpickled here.
        spilled = [(row, pickle.loads(blob)) for row, blob in blobs]
        rows = sorted(self._memory.take_rows(kind, batch, part) + spilled, key=_first)
        return [value for _, value in rows]

    def mapping(self, name: str) -> DiskMapping:
        """A string -> string mapping kept in this spill's file (what grows with a run and
        is looked up a row at a time: the chunk registry)."""
        return DiskMapping(self._db, name)

    def close(self) -> None:
        self._memory.close()
        self._db.close()
        shutil.rmtree(self._dir, ignore_errors=True)


def _first(pair: tuple[int, Any]) -> int:
    return pair[0]


class DiskMapping(MutableMapping[str, str]):
    """A dict of strings in a SQLite table: a lookup a row costs ~10 µs, memory none."""

    def __init__(self, db: sqlite3.Connection, name: str) -> None:
        if not name.isidentifier():
            raise ValueError(f"not a table name: {name!r}")
        self._db, self._table = db, f"map_{name}"
        db.execute(f"CREATE TABLE IF NOT EXISTS {self._table} (k TEXT PRIMARY KEY, v TEXT)")

    def __getitem__(self, key: str) -> str:
        row = self._db.execute(f"SELECT v FROM {self._table} WHERE k = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return str(row[0])

    def __setitem__(self, key: str, value: str) -> None:
        self._db.execute(f"INSERT OR REPLACE INTO {self._table} VALUES (?, ?)", (key, value))

    def __delitem__(self, key: str) -> None:
        if self._db.execute(f"DELETE FROM {self._table} WHERE k = ?", (key,)).rowcount == 0:
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (str(k) for (k,) in self._db.execute(f"SELECT k FROM {self._table}").fetchall())

    def __len__(self) -> int:
        return int(self._db.execute(f"SELECT count(*) FROM {self._table}").fetchone()[0])
