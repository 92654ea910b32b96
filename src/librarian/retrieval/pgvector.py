"""The pgvector retriever: hub vectors in PostgreSQL, top-K by an HNSW index.

A hub's score is the mean of three cosines (name, path, name + children); with unit
vectors that is the inner product with the mean vector (`retrieve.combined_vectors`), so
the table holds one `vector(dim)` a hub, indexed with HNSW over `vector_ip_ops`, and the
query orders by `<#>` (negative inner product). Same scores as in memory, same order.

The table is a cache derived from the hub and the embedding model, not migrated data:
it is named by dimension and rebuilt when the model fingerprint or hub hash changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import SQLAlchemyError

from librarian.models.seams import Vectors
from librarian.retrieval.flat import Hits, Search, combined_vectors, top_hits
from librarian.retrieval.index import HubIndex
from librarian.sql import StoreError, is_postgres, reason

# With evidence added, how many hubs (at least) the dense search hands to the re-ranking.
SHORTLIST = 60


def _literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.8g}" for x in vector.tolist()) + "]"


@dataclass
class PgVectorRetriever:
    engine: Engine
    index: HubIndex
    name: str = "pgvector hnsw"

    def __post_init__(self) -> None:
        if not is_postgres(self.engine):
            raise StoreError("the pgvector backend needs a PostgreSQL database")
        self.table = f"hub_vectors_{self.index.dimension}"
        self.version = f"{self.index.model_fingerprint[:16]}:{self.index.hub_hash[:16]}"
        try:
            self._sync()
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot prepare {self.table}: {reason(exc)}") from exc

    def _sync(self) -> None:
        with self.engine.begin() as conn:
            conn.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
            conn.execute(
                text(
                    f"CREATE TABLE IF NOT EXISTS {self.table} (cre_id text PRIMARY KEY, "
                    f"version text NOT NULL, embedding vector({self.index.dimension}) NOT NULL)"
                )
            )
            # One builder at a time; others wait, then find it current.
            conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:t))"), {"t": self.table})
            stale = conn.execute(
                text(f"SELECT count(*) FROM {self.table} WHERE version <> :v"), {"v": self.version}
            ).scalar_one()
            present = conn.execute(text(f"SELECT count(*) FROM {self.table}")).scalar_one()
            if stale == 0 and present == len(self.index.ids):
                return
            conn.execute(text(f"TRUNCATE {self.table}"))
            vectors = combined_vectors(self.index)
            conn.execute(
                text(f"INSERT INTO {self.table} (cre_id, version, embedding) VALUES (:c, :v, :e)"),
                [
                    {"c": cre, "v": self.version, "e": _literal(vec)}
                    for cre, vec in zip(self.index.ids, vectors, strict=True)
                ],
            )
            conn.execute(
                text(
                    f"CREATE INDEX IF NOT EXISTS {self.table}_hnsw ON {self.table} "
                    "USING hnsw (embedding vector_ip_ops)"
                )
            )

    def search(self, queries: Vectors, search: Search) -> Hits:
        """Top-k by the dense score in PostgreSQL. With a bonus, a dense shortlist three
        times as long is fetched and re-ranked by dense + bonus in memory."""
        top_k, min_score, allowed, bonus = search
        limit = top_k if bonus is None else max(3 * top_k, SHORTLIST)
        column = {c: i for i, c in enumerate(self.index.ids)}
        results: Hits = []
        try:
            with self.engine.begin() as conn:
                # The HNSW candidate list must be at least k long or it returns fewer rows;
                # with a routing filter, keep scanning until k rows pass it.
                conn.execute(text(f"SET LOCAL hnsw.ef_search = {max(100, 4 * limit)}"))
                if allowed is not None and any(a is not None for a in allowed):
                    # pgvector >= 0.8; only asked for when routing narrows a search.
                    conn.execute(text("SET LOCAL hnsw.iterative_scan = strict_order"))
                for row, query in enumerate(queries):
                    only = allowed[row] if allowed is not None else None
                    found = self._nearest(conn, query, limit, only)
                    ids = [c for c, _ in found]
                    dense = np.asarray([s for _, s in found], dtype=np.float32)
                    extra = 0.0 if bonus is None else bonus[row, [column[c] for c in ids]]
                    plain = None if bonus is None else dense
                    results.append(top_hits(dense + extra, ids, top_k, min_score, plain))
        except SQLAlchemyError as exc:
            raise StoreError(f"pgvector search failed: {reason(exc)}") from exc
        return results

    def _nearest(
        self, conn: Connection, query: Vectors, limit: int, only: frozenset[str] | None
    ) -> list[tuple[str, float]]:
        where = "WHERE cre_id = ANY(:ids) " if only is not None else ""
        params: dict[str, object] = {"q": _literal(query), "k": limit}
        if only is not None:
            params["ids"] = sorted(only)
        rows = conn.execute(
            text(
                f"SELECT cre_id, -(embedding <#> CAST(:q AS vector)) AS score "
                f"FROM {self.table} {where}"
                "ORDER BY embedding <#> CAST(:q AS vector), cre_id LIMIT :k"
            ),
            params,
        ).all()
        return [(str(r.cre_id), float(r.score)) for r in rows]
