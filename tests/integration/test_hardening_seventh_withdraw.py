"""Issue 56, items 5 and 6 on SQLite and PostgreSQL: `librarian run` holds back the
withdrawal of a header-only CSV (exit 0, said in its summary) unless `--allow-withdraw`;
a withdrawal that races a reviewer keeps the reviewer's decision, and `queue check`
names a withdrawn item with a standing decision."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from librarian.cli import app
from librarian.store.db import make_engine, upgrade
from librarian.store.decisions import REVIEW_REQUIRED, WITHDRAWN
from librarian.store.human import violations
from librarian.store.status import USER_CONFIRMED, status_counts
from librarian.store.tables import DecisionRow
from tests.integration.conftest import RawRun
from tests.unit.test_hardening_seventh_withdraw import (
    ROWS,
    SOURCE,
    csv,
    decide_row,
    decided_between_read_and_write,
    link,
    rows_of,
    still_in_document,
    without,
)


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'store.db'}"
    else:
        url = str(request.getfixturevalue("postgres_url"))
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    return url


def run(raw_run: RawRun, text: str, database: str, name: str, *extra: str) -> dict[str, Any]:
    """`librarian run` of `text` as document Acme, committed: its summary."""
    policy = raw_run.folder / "policy.csv"
    policy.write_text(text)
    out = raw_run.folder / name
    args = (str(policy), "--commit", "--db", database, "--source", SOURCE, "--out", str(out))
    result = raw_run(*args, *extra)
    assert result.returncode == 0, result.stderr[-3000:]
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return summary


def test_a_header_only_csv_is_held_back_unless_allowed(raw_run: RawRun, database: str) -> None:
    engine = make_engine(database)
    run(raw_run, csv(ROWS), database, "v1")
    open_ones = [n for n in ROWS if rows_of(engine, n)[0].status == REVIEW_REQUIRED]
    for name in open_ones[:2]:
        decide_row(engine, name)
    held = run(raw_run, "id,text\n", database, "v2")
    (said,) = held["withdrawn"]
    assert said.startswith("withdrawal held back: this version holds 0 of the document's 6")
    assert "it would have withdrawn 6 requirements" in said
    assert still_in_document(engine) == set(ROWS)
    allowed = run(raw_run, "id,text\n", database, "v3", "--allow-withdraw")
    assert not any("held back" in line for line in allowed["withdrawn"])
    assert still_in_document(engine) == set()
    engine.dispose()


def test_a_withdrawal_racing_a_reviewer_keeps_the_decision(tmp_path: Path, database: str) -> None:
    engine = make_engine(database)
    link(tmp_path, csv(ROWS), database, "v1")
    fired, stop = decided_between_read_and_write(engine, "R3")
    try:
        said = link(tmp_path, csv(without("R3")), database, "v2")
    finally:
        stop()
    assert fired
    (row,) = rows_of(engine, "R3")
    assert row.status == REVIEW_REQUIRED and row.consumed_at is not None
    assert row.withdrawn_at is not None
    assert said == [
        "1 requirement no longer in the document: decided, marked so and left out of the "
        "OpenCRE export (R3)"
    ]
    with Session(engine) as session:
        assert violations(session) == []
        assert status_counts(session)[USER_CONFIRMED] == 1
    # What the race left before the fix is named by `queue check`.
    with Session(engine) as session, session.begin():
        session.execute(
            update(DecisionRow).where(DecisionRow.id == row.id).values(status=WITHDRAWN)
        )
    checked = CliRunner().invoke(app, ["queue", "check", "--db", database])
    assert checked.exit_code == 1
    assert f"{row.review_id} (row {row.id}): withdrawn, with a standing decision" in checked.output
    engine.dispose()
