"""Commit mode end to end: the real console script, real Prefect, SQLite and PostgreSQL.

Faults: a SIGKILL in the middle of a commit, a database that refuses writes (locked,
disk full, connection gone). After every one: each row decided exactly once, none lost.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from librarian.paths import DEFAULT_LINKS, packaged_data
from librarian.pipeline.components import UPDATE_EVALUATED
from librarian.pipeline.sinks import read_jsonl
from librarian.schemas.envelopes import LinkProposal, ReviewItem
from librarian.store.db import make_engine, upgrade
from librarian.store.queue import enqueue, pending
from librarian.store.tables import DecisionRow, RejectedRow
from tests.integration.conftest import (
    SAMPLE,
    RawRun,
    consumed_once,
    count,
    own_prefect,
    queue_rows,
    start_trained,
    wait_for_batches,
)
from tests.rfc import assert_rfc_valid, assert_rfc_valid_decisions

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
BAD_ROWS = packaged_data("samples", "queue_with_bad_rows.jsonl")


def test_commit_twice_adds_nothing_and_keeps_bad_rows(tmp_path: Path, raw_run: RawRun) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    first = raw_run(str(BAD_ROWS), "--commit", "--db", db, "--out", str(tmp_path / "a"))
    assert first.returncode == 0, first.stderr[-3000:]
    engine = make_engine(db)
    assert count(engine, DecisionRow.id) == 29
    assert count(engine, RejectedRow.id) == 22
    with Session(engine) as session:
        stored = [row.envelope for row in session.execute(select(DecisionRow)).scalars()]
        for envelope in stored:
            model = LinkProposal if envelope["status"] == "linked" else ReviewItem
            model.model_validate(envelope)
        assert_rfc_valid(stored)
        raws = (
            session.execute(select(RejectedRow.raw).where(RejectedRow.reason == "INVALID_JSON"))
            .scalars()
            .all()
        )
        assert len(raws) == 4 and all(raws)  # the bad lines themselves, kept
    second = raw_run(str(BAD_ROWS), "--commit", "--db", db, "--out", str(tmp_path / "b"))
    assert second.returncode == 0, second.stderr[-3000:]
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["by_reason"]["skipped"]["UNCHANGED"] == 29
    assert summary["stored"] == {
        "decisions": 0,
        "rejections": 0,
        "already_stored": 0,
        "failed": 0,
        "dead_lettered": 0,
        "redecided": 0,
        "left_to_reviewers": 0,
    }
    assert count(engine, DecisionRow.id) == 29 and count(engine, RejectedRow.id) == 22
    engine.dispose()


def test_dry_run_never_writes_the_database(tmp_path: Path, raw_run: RawRun) -> None:
    result = raw_run(str(SAMPLE), "--out", str(tmp_path / "o"))
    assert result.returncode == 0
    assert not list(tmp_path.glob("*.db")) and not (ROOT / "librarian.db").exists()


def test_a_dry_run_given_the_database_reads_priors_and_writes_nothing(
    tmp_path: Path, raw_run: RawRun
) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    (_, first), (_, second) = queue_rows(2)
    before = [dict(first, text="Generate a new session token when the user authenticates.")]
    after = [dict(before[0], chunk_id="q-0-v2", text="Never issue a fresh session token."), second]
    for name, rows in (("v1", before), ("v2", after)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = raw_run(
        str(tmp_path / "v1.jsonl"), "--commit", "--db", db, "--out", str(tmp_path / "v1")
    )
    assert done.returncode == 0, done.stderr[-3000:]
    stored = (tmp_path / "l.db").read_bytes()
    dry = raw_run(str(tmp_path / "v2.jsonl"), "--db", db, "--out", str(tmp_path / "v2"))
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert (tmp_path / "l.db").read_bytes() == stored  # read, never written
    reviews = {r["chunk_id"]: r for r in read_jsonl(tmp_path / "v2" / "reviews.jsonl")}
    updated = reviews["q-0-v2"]["update_detection"]
    assert updated["is_update"] and updated["prior_chunk_id"] == "q-0"
    assert updated["adversarial_flags"] == ["NEGATION_MISMATCH"]
    assert not reviews["q-1"]["update_detection"]["is_update"]  # checked: decided never
    for review in reviews.values():
        assert UPDATE_EVALUATED in review["retrieval"]["retriever"]
    summary = json.loads((tmp_path / "v2" / "summary.json").read_text())
    assert (summary["mode"] == "dry-run" and "stored" not in summary) or not summary["stored"]


def test_two_consumers_drain_one_postgres_queue_without_doubles(
    tmp_path: Path, raw_run: RawRun, postgres_url: str
) -> None:
    engine = make_engine(postgres_url)
    upgrade(engine)
    enqueue(engine, queue_rows(240))
    command = raw_run.command("--from-db", "--db", postgres_url, "--batch-size", "8")
    procs = [
        subprocess.Popen(
            [*command, "--out", str(tmp_path / f"c{i}")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=own_prefect(tmp_path / f"prefect-{i}"),
        )
        for i in range(2)
    ]
    outputs = [p.communicate(timeout=600) for p in procs]
    for proc, (_, stderr) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, stderr[-3000:]
    reads = [json.loads((tmp_path / f"c{i}" / "summary.json").read_text())["read"] for i in (0, 1)]
    assert sum(reads) == 240
    consumed_once(engine, 240)
    engine.dispose()


def test_sigkill_mid_commit_then_rerun_decides_every_row_once(
    tmp_path: Path, raw_run: RawRun, postgres_url: str
) -> None:
    engine = make_engine(postgres_url)
    upgrade(engine)
    enqueue(engine, queue_rows(600))
    command = raw_run.command("--from-db", "--db", postgres_url, "--batch-size", "10")
    proc = subprocess.Popen(
        [*command, "--out", str(tmp_path / "killed")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=own_prefect(tmp_path / "prefect-home"),
    )
    try:
        wait_for_batches(proc, 3)  # 30 rows stored
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    decided = count(engine, DecisionRow.id)
    assert 30 <= decided < 600
    assert pending(engine) == 600 - decided  # consumed exactly when decided, not before
    rerun = subprocess.run(
        [*command, "--out", str(tmp_path / "rerun")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=own_prefect(tmp_path / "prefect-home"),
    )
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    consumed_once(engine, 600)
    engine.dispose()


def test_file_commit_killed_then_rerun_keeps_each_chunk_once(
    tmp_path: Path, raw_run: RawRun
) -> None:
    queue = tmp_path / "big.jsonl"
    queue.write_text("".join(json.dumps(row) + "\n" for _, row in queue_rows(600)))
    db = f"sqlite:///{tmp_path / 'l.db'}"
    command = raw_run.command(str(queue), "--commit", "--db", db, "--batch-size", "10")
    proc = subprocess.Popen(
        [*command, "--out", str(tmp_path / "killed")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=own_prefect(tmp_path / "prefect-home"),
    )
    engine = make_engine(db)
    try:
        wait_for_batches(proc, 3)  # 30 rows stored
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    rerun = subprocess.run(
        [*command, "--out", str(tmp_path / "rerun")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=own_prefect(tmp_path / "prefect-home"),
    )
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    summary = json.loads((tmp_path / "rerun" / "summary.json").read_text())
    assert summary["by_reason"]["skipped"]["UNCHANGED"] >= 30
    with Session(engine) as session:
        chunks = session.execute(select(DecisionRow.chunk_id)).scalars().all()
    assert sorted(chunks) == sorted(f"q-{i}" for i in range(600))
    engine.dispose()


REFUSE = {
    "disk full": "RAISE EXCEPTION 'could not extend file: No space left on device' "
    "USING ERRCODE = '53100';",
    "connection gone": "PERFORM pg_terminate_backend(pg_backend_pid());",
}


@pytest.mark.parametrize("fault", sorted(REFUSE))
def test_postgres_refusing_writes_fails_and_leaves_the_queue(
    tmp_path: Path, raw_run: RawRun, postgres_url: str, fault: str
) -> None:
    engine = make_engine(postgres_url)
    upgrade(engine)
    enqueue(engine, queue_rows(20))
    with engine.begin() as conn:
        conn.execute(
            text(
                "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                f"{REFUSE[fault]} RETURN NEW; END $$"
            )
        )
        conn.execute(
            text(
                "CREATE TRIGGER refuse BEFORE INSERT ON decision_queue "
                "FOR EACH ROW EXECUTE FUNCTION refuse()"
            )
        )
    failed = raw_run("--from-db", "--db", postgres_url, "--out", str(tmp_path / "f"))
    assert failed.returncode == 1
    expected = "No space left on device" if fault == "disk full" else "connection"
    assert expected in failed.stderr and "database refused the batch" in failed.stderr
    assert pending(engine) == 20 and count(engine, DecisionRow.id) == 0
    assert not (tmp_path / "f" / "summary.json").exists()
    with engine.begin() as conn:
        conn.execute(text("DROP TRIGGER refuse ON decision_queue"))
    again = raw_run("--from-db", "--db", postgres_url, "--out", str(tmp_path / "g"))
    assert again.returncode == 0, again.stderr[-3000:]
    consumed_once(engine, 20)
    engine.dispose()


def test_locked_sqlite_fails_the_batch_and_leaves_the_queue(
    tmp_path: Path, raw_run: RawRun
) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    engine = make_engine(db)
    upgrade(engine)
    enqueue(engine, queue_rows(10))
    blocker = engine.raw_connection()
    blocker.execute("BEGIN EXCLUSIVE")  # another writer holds the database
    try:
        result = raw_run(
            "--from-db",
            "--db",
            db,
            "--out",
            str(tmp_path / "o"),
            env={"LIBRARIAN_SQLITE_TIMEOUT_S": "1"},
        )
    finally:
        blocker.rollback()
        blocker.close()
    assert result.returncode == 1
    assert "database is locked" in result.stderr
    assert pending(engine) == 10 and count(engine, DecisionRow.id) == 0
    engine.dispose()


def test_updates_reviews_and_learning_from_reviewers(
    tmp_path: Path, raw_run: RawRun, librarian_home: Path, trained_home: Path
) -> None:
    """A reworded span is an update; its review is exported, decided, imported, learnt
    (into models beside the embedder a first train built: `start_trained`)."""
    import csv

    from typer.testing import CliRunner

    from librarian.cli import app

    db = f"sqlite:///{tmp_path / 'l.db'}"
    (_, first), (_, second) = queue_rows(2)
    before = [
        dict(first, text="Generate a new session token when the user authenticates."),
        dict(second, text="Passwords must be hashed with a strong adaptive function."),
    ]
    after = [
        dict(before[0], chunk_id="q-0-v2", text="After login, issue a fresh session token."),
        dict(before[1], chunk_id="q-1-v2", text="Passwords must not be hashed with it."),
    ]
    for name, rows in (("v1", before), ("v2", after)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        done = raw_run(str(path), "--commit", "--db", db, "--out", str(tmp_path / name))
        assert done.returncode == 0, done.stderr[-3000:]
    engine = make_engine(db)
    with Session(engine) as session:
        updates = {
            d.chunk_id: d
            for d in session.execute(select(DecisionRow).where(DecisionRow.is_update)).scalars()
        }
    assert set(updates) == {"q-0-v2", "q-1-v2"}
    assert updates["q-0-v2"].prior_chunk_id == "q-0"
    negated = updates["q-1-v2"].envelope["update_detection"]
    assert negated["adversarial_flags"] == ["NEGATION_MISMATCH"]

    runner = CliRunner()
    sheet = tmp_path / "sheet.csv"
    exported = runner.invoke(app, ["review", "export", "--db", db, "--out", str(sheet)])
    assert exported.exit_code == 0, exported.output
    rows = list(csv.DictReader(sheet.open()))
    # All four went to review with no trained models; each update closed its older text's
    # open item as superseded (a section never holds two open items), so two are left.
    assert sorted(r["chunk_id"] for r in rows) == ["q-0-v2", "q-1-v2"]
    for row in rows:
        row["decision"], row["cre_id"] = "choose", "002-630"
    with sheet.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    imported = runner.invoke(
        app, ["review", "import", str(sheet), "--db", db, "--reviewer", "rita"]
    )
    assert imported.exit_code == 0, imported.output
    counts = re.search(r"approved (\d+), corrected (\d+)", imported.output)
    assert counts is not None and int(counts[1]) + int(counts[2]) == 2
    decisions = tmp_path / "decisions.jsonl"
    export = ["review", "export", "--db", db, "--format", "human-decision", "--out", str(decisions)]
    assert runner.invoke(app, export).exit_code == 0
    records = [json.loads(line) for line in decisions.read_text().splitlines()]
    assert len(records) == 2 and {r["decided_by"] for r in records} == {"rita"}
    assert_rfc_valid_decisions(records)
    again = runner.invoke(app, ["review", "import", str(decisions), "--db", db])
    assert again.exit_code == 0 and "unchanged 2" in again.output, again.output
    html = tmp_path / "queue.html"
    decided = ["review", "export", "--db", db, "--status", "decided", "--format", "html"]
    assert runner.invoke(app, [*decided, "--out", str(html)]).exit_code == 0
    assert html.read_text().count("<tr>") == 3

    start_trained(trained_home, librarian_home, models=tmp_path / "models")
    trained = runner.invoke(
        app,
        ["train", "--links", str(DEFAULT_LINKS), "--links", db, "--out", str(tmp_path / "models")],
    )
    assert trained.exit_code == 0, trained.output
    card = json.loads((tmp_path / "models" / "card.json").read_text())
    assert card["data"]["frameworks_seen"]["reviewers"] == 2
    engine.dispose()
