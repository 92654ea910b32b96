"""Issue 27, item 5: what a source's reviewers certify reaches its open items (the next
run, or `relink`), and never an item a person decided."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from librarian.pipeline.ingest import section_from_text
from librarian.review.decisions import DecisionRequest, decide
from librarian.review.relink import open_sections, relink
from librarian.schemas.records import Section
from librarian.store.db import make_engine, upgrade
from librarian.store.decisions import StoredBatch, unchanged, write
from librarian.store.tables import DecisionRow
from tests.stubs import small_hub, stub_pipeline
from tests.unit.test_workbench import TEXTS

DIGEST = "models-1"


def sections() -> list[Section]:
    return [
        section_from_text(t).model_copy(update={"chunk_id": f"c{i}", "line": i + 1})
        for i, t in enumerate(TEXTS)
    ]


def store(engine: Engine, run: str) -> int:
    batch = sections()
    result = stub_pipeline(threshold=0.99, top_k=6, top_n=5).link(batch, run)  # all to review
    with Session(engine) as session:
        stored = StoredBatch(
            run, result.envelopes, {s.chunk_id: s for s in batch}, [], {}, "t",
            models_digest=DIGEST,
        )  # fmt: skip
        written = write(session, stored)
        session.commit()
    return written.redecided


def rows(engine: Engine) -> list[DecisionRow]:
    with Session(engine) as session:
        return list(session.execute(select(DecisionRow).order_by(DecisionRow.id)).scalars())


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    engine = make_engine(f"sqlite:///{tmp_path / 'relink.db'}")
    upgrade(engine)
    store(engine, "r1")
    return engine


def test_the_next_run_decides_again_the_open_items_of_a_source_its_reviewers_moved(
    engine: Engine,
) -> None:
    with Session(engine) as session:
        assert len(unchanged(session, sections(), DIGEST)) == len(TEXTS)  # nothing new
    decided = rows(engine)[0]
    with Session(engine) as session, session.begin():
        decide(session, DecisionRequest(str(decided.review_id), "reject", "rita"), small_hub().ids)
    with Session(engine) as session:
        skipped = unchanged(session, sections(), DIGEST)
    assert [s.chunk_id for s in skipped] == [decided.chunk_id]  # the others go round again
    assert store(engine, "r2") == len(TEXTS) - 1
    after = rows(engine)
    assert after[0].review_id == decided.review_id and after[0].pipeline_run_id == "r1"
    assert after[0].consumed_at is not None
    assert {r.pipeline_run_id for r in after[1:]} == {"r2"}


def test_relink_decides_a_sources_open_items_again_and_leaves_decided_ones(
    engine: Engine,
) -> None:
    decided = rows(engine)[0]
    with Session(engine) as session, session.begin():
        decide(session, DecisionRequest(str(decided.review_id), "approve", "rita"), small_hub().ids)
    source = str(decided.source_key)
    with Session(engine) as session:
        assert len(open_sections(session, source)) == len(TEXTS) - 1
    pipeline = stub_pipeline(threshold=0.99, top_k=6, top_n=5)
    dry = relink(engine, pipeline, source, "relink-dry", commit=False)
    assert (dry.open_items, dry.stored) == (len(TEXTS) - 1, None)
    assert {r.pipeline_run_id for r in rows(engine)} == {"r1"}  # a dry relink writes nothing
    done = relink(engine, pipeline, source, "relink-1", commit=True)
    assert done.stored is not None and done.stored.redecided == len(TEXTS) - 1
    after = rows(engine)
    assert len(after) == len(TEXTS)  # replaced in place, nothing added
    assert after[0].pipeline_run_id == "r1" and after[0].review_id == decided.review_id
    assert {r.pipeline_run_id for r in after[1:]} == {"relink-1"}
