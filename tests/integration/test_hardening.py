"""Issue 13 end to end, through the real console script, Prefect, SQLite and PostgreSQL:
a row that errors while processed is retried, then dead-lettered, never blocking the rows
around it; a NUL never blocks PostgreSQL; a failed run keeps the previous outputs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select, text
from sqlalchemy.orm import Session

from librarian.sql import is_postgres
from librarian.store.db import make_engine, upgrade
from librarian.store.queue import MAX_ATTEMPTS, dead_letters, enqueue, pending
from librarian.store.tables import DecisionRow, KnowledgeQueueRow, QueueAttempt, RejectedRow
from tests.integration.conftest import LIBRARIAN, RawRun, count, queue_rows
from tests.rfc import assert_rfc_valid

pytestmark = pytest.mark.integration

POISON = "q-3"  # the database refuses this one row's decision, every time


def refuse_one_row(engine: Engine) -> None:
    """A trigger that refuses the decision of one chunk: the database's own refusal of one
    row's data (as PostgreSQL refuses what it cannot store), not an outage."""
    with engine.begin() as conn:
        if is_postgres(engine):
            conn.execute(
                text(
                    "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                    f"IF NEW.chunk_id = '{POISON}' THEN RAISE EXCEPTION 'poison row refused' "
                    "USING ERRCODE = '22023'; END IF; RETURN NEW; END $$"
                )
            )
            conn.execute(
                text(
                    "CREATE TRIGGER refuse BEFORE INSERT ON decision_queue "
                    "FOR EACH ROW EXECUTE FUNCTION refuse()"
                )
            )
        else:
            conn.execute(
                text(
                    "CREATE TRIGGER refuse BEFORE INSERT ON decision_queue "
                    f"WHEN NEW.chunk_id = '{POISON}' "
                    "BEGIN SELECT RAISE(ABORT, 'poison row refused'); END"
                )
            )


def attempts(engine: Engine) -> int:
    with Session(engine) as session:
        found = session.execute(select(QueueAttempt.attempts)).scalars().all()
    return found[0] if found else 0


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'q.db'}"
    return str(request.getfixturevalue("postgres_url"))


def test_a_poison_row_is_dead_lettered_and_never_blocks_the_queue(
    tmp_path: Path, raw_run: RawRun, database: str
) -> None:
    engine = make_engine(database)
    upgrade(engine)
    rows = queue_rows(8)
    deep = dict(rows[5][1], span_heading_path="[" * 10_000 + "]" * 10_000)  # refused on entry
    enqueue(engine, [*rows[:5], (6, deep), *rows[6:]])
    refuse_one_row(engine)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        out = tmp_path / f"run{attempt}"
        result = raw_run("--from-db", "--db", database, "--out", str(out))
        assert result.returncode == 0, result.stderr[-3000:]
        summary = json.loads((out / "summary.json").read_text())
        assert attempts(engine) == attempt
        if attempt == 1:  # every other row decided (or, the deep one, rejected) at once
            assert count(engine, DecisionRow.id) == 6 and count(engine, RejectedRow.id) == 1
            assert summary["stored"]["failed"] == 1 and summary["stored"]["dead_lettered"] == 0
            rejected = [json.loads(x) for x in (out / "rejected.jsonl").read_text().splitlines()]
            assert {r["reason"] for r in rejected} == {"INVALID_FIELD", "PROCESSING_ERROR"}
            assert any("poison row refused" in r["message"] for r in rejected)
        assert pending(engine) == (0 if attempt == MAX_ATTEMPTS else 1)
    (dead,) = dead_letters(engine)
    assert dead.attempts == MAX_ATTEMPTS and "poison row refused" in dead.last_error
    assert summary["stored"]["dead_lettered"] == 1
    with Session(engine) as session:
        open_rows = session.execute(
            select(func.count(KnowledgeQueueRow.id)).where(KnowledgeQueueRow.consumed_at.is_(None))
        ).scalar_one()
        stored = [r.envelope for r in session.execute(select(DecisionRow)).scalars()]
    assert open_rows == 1  # the dead letter stays unconsumed, for a person, never re-claimed
    assert_rfc_valid(stored)
    engine.dispose()
    status = subprocess.run(
        [LIBRARIAN, "queue", "status", "--db", database], capture_output=True, text=True, check=True
    )
    assert "0 rows waiting" in status.stdout and "1 dead letters" in status.stdout
    assert f"{MAX_ATTEMPTS}/{MAX_ATTEMPTS} attempts" in status.stdout
    assert "poison row refused" in status.stdout


def test_a_nul_in_text_never_blocks_postgres(
    tmp_path: Path, raw_run: RawRun, postgres_url: str
) -> None:
    rows = [row for _, row in queue_rows(5)]
    rows[2]["text"] = "Rotate keys\u0000 yearly."
    path = tmp_path / "nul.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for attempt in range(2):
        out = tmp_path / f"o{attempt}"
        result = raw_run(str(path), "--commit", "--db", postgres_url, "--out", str(out))
        assert result.returncode == 0, result.stderr[-3000:]
    engine = make_engine(postgres_url)
    assert count(engine, DecisionRow.id) == 4
    with Session(engine) as session:
        (raw,) = session.execute(select(RejectedRow.raw)).scalars().all()
    assert "\\x00" in raw or "\\u0000" in raw  # the refused line itself, kept as it came
    engine.dispose()


def test_a_failed_run_keeps_the_previous_outputs(tmp_path: Path, raw_run: RawRun) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    engine = make_engine(db)
    upgrade(engine)
    enqueue(engine, queue_rows(10))
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text('{"run": "the previous one"}')
    (out / "proposals.jsonl").write_text('{"kept": true}\n')
    blocker = engine.raw_connection()
    blocker.execute("BEGIN EXCLUSIVE")  # another writer holds the database: the run fails
    try:
        result = raw_run(
            "--from-db",
            "--db",
            db,
            "--out",
            str(out),
            env={"LIBRARIAN_SQLITE_TIMEOUT_S": "1"},
        )
    finally:
        blocker.rollback()
        blocker.close()
    assert result.returncode == 1 and "database is locked" in result.stderr
    assert (out / "summary.json").read_text() == '{"run": "the previous one"}'
    assert (out / "proposals.jsonl").read_text() == '{"kept": true}\n'
    assert not list(tmp_path.glob(".out.*.partial"))
    assert pending(engine) == 10 and attempts(engine) == 0  # an outage blames no row
    engine.dispose()
