"""The decision store on a real SQLite file: idempotency, spans, rejections, the queue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from librarian.pipeline import one_shot
from librarian.pipeline.ingest import parse_line, section_from_text
from librarian.schemas.envelopes import Envelope
from librarian.schemas.records import RejectCode, Rejection, Section, SkipCode
from librarian.store.db import DatabaseUrlError, make_engine, upgrade
from librarian.store.decisions import StoredBatch, priors, unchanged, write
from librarian.store.queue import claim, enqueue, pending, stamp_consumed
from librarian.store.tables import DecisionRow, KnowledgeQueueRow, RejectedRow
from tests.stubs import stub_pipeline


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    engine = make_engine(f"sqlite:///{tmp_path / 'librarian.store.db'}")
    upgrade(engine)
    upgrade(engine)  # idempotent
    return engine


def sections(*texts: str, chunk: str = "c") -> list[Section]:
    out = []
    for i, text in enumerate(texts):
        s = section_from_text(text)
        out.append(s.model_copy(update={"chunk_id": f"{chunk}{i}", "line": i + 1}))
    return out


def batch_of(run: str, envelopes: list[Envelope], batch: list[Section], **kw: Any) -> StoredBatch:
    sections = {s.chunk_id: s for s in batch}
    return StoredBatch(run_id=run, envelopes=envelopes, sections=sections, source="test", **kw)


def decide_and_write(engine: Engine, batch: list[Section], run: str = "r1") -> int:
    result = one_shot.link(stub_pipeline(threshold=0.1), batch, run)
    with Session(engine) as session:
        written = write(session, batch_of(run, result.envelopes, batch))
        session.commit()
    return written.decisions


def test_a_decided_chunk_is_unchanged_next_time(engine: Engine) -> None:
    batch = sections("rotate session token after login", "sql injection queries")
    assert decide_and_write(engine, batch) == 2
    with Session(engine) as session:
        skips = unchanged(session, batch)
    assert [s.reason for s in skips] == [SkipCode.UNCHANGED, SkipCode.UNCHANGED]
    assert decide_and_write(engine, batch, "r2") == 0  # a racing writer adds nothing either
    with Session(engine) as session:
        assert session.execute(select(func.count(DecisionRow.id))).scalar_one() == 2


def test_each_decision_keeps_its_routing_decision(engine: Engine) -> None:
    batch = sections("rotate session token after login", "sql injection queries")
    batch[1] = batch[1].model_copy(update={"collections": ("nope",)})
    result = one_shot.link(stub_pipeline(threshold=0.1), batch, "r1")
    with Session(engine) as session:
        write(session, batch_of("r1", result.envelopes, batch, routing=result.routing))
        session.commit()
        rows = session.execute(select(DecisionRow.chunk_id, DecisionRow.routing)).tuples().all()
    stored: dict[str, Any] = dict(rows)
    assert stored["c0"] is not None and stored["c0"]["effective"] == "all"
    assert stored["c0"]["widened"] is False
    assert stored["c1"] is not None and stored["c1"]["widened"] is True
    assert "nope" in stored["c1"]["warnings"][0]


def test_same_span_with_new_text_has_a_prior(engine: Engine) -> None:
    first = sections("rotate session token after login", chunk="a")
    decide_and_write(engine, first)
    reworded = sections("after login, issue a new session token", chunk="b")
    assert reworded[0].span_key == first[0].span_key
    with Session(engine) as session:
        assert unchanged(session, reworded) == []
        found = priors(session, reworded)
    prior = found[reworded[0].span_key]
    assert prior.chunk_id == "a0" and prior.linked_cre == "200-001"
    with Session(engine) as session:
        assert priors(session, first) == {}  # same text: no update


def test_rejections_keep_their_raw_input_once(engine: Engine) -> None:
    raw = b'{"chunk_id": "x", "text": "\xff"}'
    rejection = parse_line(7, raw)
    assert isinstance(rejection, Rejection) and rejection.reason == RejectCode.INVALID_ENCODING
    for _ in range(2):
        with Session(engine) as session:
            stored = StoredBatch(
                run_id="r",
                envelopes=[],
                sections={},
                source="queue.jsonl",
                rejections=[rejection],
                raw_lines={7: raw},
            )
            write(session, stored)
            session.commit()
    with Session(engine) as session:
        rows = session.execute(select(RejectedRow)).scalars().all()
    assert len(rows) == 1
    assert rows[0].line == 7 and "\\xff" in rows[0].raw and rows[0].reason == "INVALID_ENCODING"


def queue_rows(n: int, label: str = "KNOWLEDGE") -> list[tuple[int, dict[str, object]]]:
    return [
        (
            i,
            {
                "chunk_id": f"q{i}",
                "artifact_id": "a",
                "source_type": "github",
                "source_repo": "o/r",
                "source_commit_sha": "0" * 40,
                "locator_path": f"p{i}.md",
                "source_committed_at": "2026-11-01T00:00:00Z",
                "span_heading_path": "[]",
                "text": f"text {i}",
                "llm_label": label,
                "created_at": f"2026-11-01T00:00:{i:02d}Z",
            },
        )
        for i in range(n)
    ]


def test_claim_takes_oldest_accepted_rows_and_stamps_only_on_commit(engine: Engine) -> None:
    count, ignored = enqueue(engine, [*queue_rows(5), *queue_rows(2, label="NOISE")])
    assert count == 7 and ignored == []
    assert pending(engine) == 5
    batch = claim(engine, 3)
    ids = batch.ids
    assert len(ids) == 3
    first = json.loads(batch.lines[0][1])
    assert first["chunk_id"] == "q0" and first["created_at"].startswith("2026-11-01T00:00:00")
    assert isinstance(parse_line(ids[0], batch.lines[0][1]), Section)
    stamp_consumed(batch.session, ids)
    batch.session.rollback()  # a failed batch: nothing consumed
    batch.session.close()
    assert pending(engine) == 5
    batch = claim(engine, 3)
    stamp_consumed(batch.session, batch.ids)
    batch.session.commit()
    batch.session.close()
    assert pending(engine) == 2
    with Session(engine) as session:
        consumed = session.execute(
            select(KnowledgeQueueRow.chunk_id).where(KnowledgeQueueRow.consumed_at.is_not(None))
        ).scalars()
        assert sorted(str(c) for c in consumed) == ["q0", "q1", "q2"]


def test_bad_urls_are_refused_without_their_password() -> None:
    with pytest.raises(DatabaseUrlError, match="only sqlite") as refused:
        make_engine("mysql://u:hunter2@h/db")
    assert "hunter2" not in str(refused.value)
    with pytest.raises(DatabaseUrlError, match="not a database URL"):
        make_engine("nope")


def test_a_queue_row_of_undecodable_bytes_is_rejected_not_a_blocked_claim(
    engine: Engine,
) -> None:
    """Issue 13: a TEXT column holding bytes that are not UTF-8 (another writer put them
    there) used to fail every claim, so no row was ever decided."""
    enqueue(engine, queue_rows(2))
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "UPDATE knowledge_queue SET text = CAST(X'436166E9' AS TEXT) WHERE chunk_id = 'q0'"
        )
    claimed = claim(engine, 10)
    claimed.session.close()
    parsed = [parse_line(n, raw) for n, raw in claimed.lines]
    assert [type(p).__name__ for p in parsed] == ["Rejection", "Section"]
    assert isinstance(parsed[0], Rejection) and parsed[0].reason == RejectCode.INVALID_ENCODING


def test_open_items_decided_by_other_models_are_decided_again(engine: Engine) -> None:
    """Issue 22, item 2: after retraining, every still-open item was skipped as UNCHANGED
    and the better models never reached it. Decided items are left alone."""
    batch = sections("rotate session token after login", "sql injection queries")
    old = one_shot.link(stub_pipeline(threshold=0.99), batch, "r1")  # both to review
    with Session(engine) as session:
        write(session, batch_of("r1", old.envelopes, batch, models_digest="old-models"))
        session.commit()
        first = session.execute(
            select(DecisionRow).where(DecisionRow.chunk_id == "c0")
        ).scalar_one()
        first.consumed_at = first.created_at  # a reviewer decided c0
        session.commit()
        still = unchanged(session, batch, "old-models")
        again = unchanged(session, batch, "new-models")
    assert len(still) == 2  # the same models: nothing to do
    assert [s.chunk_id for s in again] == ["c0"]  # c1 is open, and other models decided it
    new = one_shot.link(stub_pipeline(threshold=0.99), batch[1:], "r2")
    with Session(engine) as session:
        written = write(
            session, batch_of("r2", new.envelopes, batch[1:], models_digest="new-models")
        )
        session.commit()
        rows = session.execute(select(DecisionRow).order_by(DecisionRow.id)).scalars().all()
    assert written.redecided == 1 and len(rows) == 2  # replaced in place, not added
    assert rows[1].models_digest == "new-models" and rows[1].pipeline_run_id == "r2"
    assert rows[0].models_digest == "old-models"
