"""The pgvector backend on a real PostgreSQL: the same top-K as in memory."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from librarian.catalogue.hub import load_hub
from librarian.factory import build_pipeline
from librarian.models.transformer import SentenceTransformerEmbedder
from librarian.paths import DEFAULT_HUB
from librarian.pipeline import components as ids
from librarian.pipeline import one_shot
from librarian.pipeline.components import stage_ids
from librarian.retrieval.flat import Search, retrieve
from librarian.retrieval.index import build_index
from librarian.retrieval.pgvector import PgVectorRetriever
from librarian.routing.collections import hub_collections
from librarian.settings import LinkerSettings
from librarian.sql import StoreError
from librarian.store.db import make_engine

pytestmark = pytest.mark.integration

QUERIES = [
    "Use parameterized queries so user input cannot change SQL statements",
    "Rotate the session token after login",
    "Keep an inventory of third-party components",
    "Train developers in secure coding",
    "Log access control failures",
]


def test_same_top_k_as_in_memory(postgres_url: str) -> None:
    hub = load_hub(DEFAULT_HUB)
    embedder = SentenceTransformerEmbedder()
    index = build_index(hub, embedder, None)
    queries = embedder.encode(QUERIES)
    engine = make_engine(postgres_url)
    pg = PgVectorRetriever(engine, index)
    PgVectorRetriever(engine, index)  # a second builder finds the table current
    with engine.connect() as conn:
        assert conn.execute(text(f"SELECT count(*) FROM {pg.table}")).scalar_one() == 522
        indexes = conn.execute(
            text("SELECT indexdef FROM pg_indexes WHERE tablename = :t"), {"t": pg.table}
        ).scalars()
        assert any("hnsw" in d and "vector_ip_ops" in d for d in indexes)
    for k in (1, 5, 20):
        memory = retrieve(queries, index, k)
        database = pg.search(queries, Search(k, 0.0))
        for mem_row, db_row in zip(memory, database, strict=True):
            assert [h.cre_id for h in db_row] == [h.cre_id for h in mem_row]
            for a, b in zip(mem_row, db_row, strict=True):
                assert a.score == pytest.approx(b.score, abs=1e-5)
    # A routing selection: the same filtered top-K in both, never a hub outside it.
    governance = hub_collections(hub)["governance"]
    allowed = [governance, None, governance, None, governance]
    memory = retrieve(queries, index, 20, -1.0, allowed)
    database = pg.search(queries, Search(20, -1.0, allowed))
    for row, (mem_row, db_row) in enumerate(zip(memory, database, strict=True)):
        assert [h.cre_id for h in db_row] == [h.cre_id for h in mem_row]
        if allowed[row] is not None:
            assert len(db_row) == 20 and {h.cre_id for h in db_row} <= governance
    engine.dispose()


def test_linker_runs_on_pgvector_and_says_so(postgres_url: str) -> None:
    settings = LinkerSettings(uncalibrated=True, vector_backend="pgvector", vector_db=postgres_url)
    linker = build_pipeline(settings)
    envelope = one_shot.explain(linker, "Use parameterized queries against SQL injection")
    assert stage_ids(envelope.retrieval.retriever)["retrieve"] == f"{ids.RETRIEVE}:pgvector hnsw"
    assert envelope.retrieval.candidates[0].cre_id == "732-873"


def test_pgvector_needs_postgres(tmp_path) -> None:  # type: ignore[no-untyped-def]
    hub = load_hub(DEFAULT_HUB)
    from tests.stubs import StubEmbedder

    embedder = StubEmbedder(384)
    index = build_index(hub, embedder, None)
    with pytest.raises(StoreError, match="PostgreSQL"):
        PgVectorRetriever(make_engine(f"sqlite:///{tmp_path / 'x.db'}"), index)
