"""The review handoff on SQLite and a real PostgreSQL: the upstream C -> D contract query
in exactly its form, two review tools on one table, and the 0004 migration of a store
holding decisions from before reviewers had names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

from librarian.review.decisions import DecisionRequest, decide
from librarian.store.db import MIGRATIONS, make_engine, upgrade
from librarian.store.human import AlreadyDecided, standing_decisions
from tests.rfc import assert_rfc_valid_decisions
from tests.stubs import small_hub
from tests.unit.test_workbench import TEXTS, review_ids, seed

pytestmark = pytest.mark.integration

UPSTREAM = text(
    "SELECT id, chunk_id, artifact_id, pipeline_run_id, schema_version, source_label, status, "
    "reason_code, review_id, confidence, envelope, created_at, consumed_at "
    "FROM decision_queue WHERE consumed_at IS NULL AND status = 'review_required' "
    "ORDER BY created_at, id"
)


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'r.db'}"
    return str(request.getfixturevalue("postgres_url"))


def test_two_review_tools_share_the_decision_queue(database: str) -> None:
    engine = make_engine(database)
    upgrade(engine)
    seed(engine, TEXTS)
    with engine.begin() as conn:  # the other tool takes the first open item
        rows = conn.execute(UPSTREAM).all()
        envelope = rows[0].envelope  # raw SQL: JSON text on SQLite, decoded on PostgreSQL
        envelope = json.loads(envelope) if isinstance(envelope, str) else envelope
        assert len(rows) == 4 and envelope["status"] == "review_required"
        assert {(r.schema_version, r.source_label) for r in rows} == {("0.1.0", "KNOWLEDGE")}
        conn.execute(
            text(
                "UPDATE decision_queue SET consumed_at = CURRENT_TIMESTAMP "
                "WHERE id = :i AND consumed_at IS NULL"
            ),
            {"i": rows[0].id},
        )
    ids = review_ids(engine)
    with (
        Session(engine) as session,
        session.begin(),
        pytest.raises(AlreadyDecided, match="another review tool"),
    ):
        decide(session, DecisionRequest(ids[0], "approve", "rita"), small_hub().ids)
    with Session(engine) as session, session.begin():
        decide(session, DecisionRequest(ids[1], "choose", "rita", ("400-000",)), small_hub().ids)
    with engine.begin() as conn:
        assert [r.review_id for r in conn.execute(UPSTREAM)] == ids[2:]
    with Session(engine) as session:
        decided = [
            d.model_dump(mode="json", exclude_none=True) for d in standing_decisions(session)
        ]
    assert len(decided) == 1
    assert_rfc_valid_decisions(decided)
    engine.dispose()


def test_migration_0004_keeps_earlier_decisions(database: str) -> None:
    engine = make_engine(database)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0003")
        conn.execute(
            text(
                "INSERT INTO decision_queue (chunk_id, content_hash, artifact_id, span_key, "
                "run_id, status, is_update, review_id, text, envelope, created_at, "
                "review_consumed_at) "
                "VALUES ('c', 'h', 'a', 's', 'r0', 'reviewed', false, 'rev-1', 't', '{}', "
                "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            )
        )
        row_id = conn.execute(text("SELECT id FROM decision_queue")).scalar_one()
        conn.execute(
            text(
                "INSERT INTO human_decisions (decision_id, review_id, action, cre_id, text, "
                "imported_from, decided_at) VALUES (:d, 'rev-1', 'accept', '400-000', 't', "
                "'sheet.csv', CURRENT_TIMESTAMP)"
            ),
            {"d": row_id},
        )
    upgrade(engine)
    check(engine)
    engine.dispose()


def check(engine: Engine) -> None:
    with engine.begin() as conn:
        row = conn.execute(
            text("SELECT status, pipeline_run_id, consumed_at FROM decision_queue")
        ).one()
        decision = conn.execute(
            text("SELECT action, final_cre_ids, decided_by, decision_uuid FROM human_decisions")
        ).one()
        assert conn.execute(UPSTREAM).all() == []  # decided before: consumed
    assert (row.status, row.pipeline_run_id) == ("review_required", "r0")
    assert row.consumed_at is not None
    assert (decision.action, decision.final_cre_ids) == ("approve", "400-000")
    assert decision.decided_by.startswith("unnamed") and len(decision.decision_uuid) == 36
